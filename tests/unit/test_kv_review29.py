"""Task review29: mends to sessions 25-26's kv rounds 56-58 and fix31 (findings: /work/tools/s26/review29.md).
Expected figures are derived by hand in the comments, never from the code under test."""
import pytest
from gpu_garden.memory import cli
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB


def test_ollama_default_context_with_an_impossible_vram_is_a_clear_error(capsys):
    # Ollama's default num_ctx (0.15.5 on) reads the GPUs' total; a negative --vram reached that table before the
    # range check and ended in a StopIteration traceback
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    for vram in (-8 * GiB, 1 * MiB):
        with pytest.raises(UserError, match="not a plausible GPU size"):
            llm.plan(s, "ollama", vram=vram, gpu_name="Apple M2")
    assert cli.main(["kv", "--model", "Qwen/Qwen3-30B-A3B", "--runtime", "ollama", "--vram", "-8"]) != 0
    assert "not a plausible GPU size" in capsys.readouterr().err
