"""A tensor-parallel size refused on llama.cpp or Ollama says what those runtimes do instead (they split layers, not
tensors, across GPUs): the hint fix35's table-driven refusal had dropped. Both paths: plan() and the CLI."""
import pytest
from gpu_garden.memory import cli
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import plan_checks as PC

GiB = 1 << 30
MODEL = "Qwen/Qwen3-8B"


@pytest.mark.parametrize("runtime, words", [("llama.cpp", "llama.cpp splits layers across GPUs instead (--split-mode layer"),
                                            ("ollama", "Ollama splits layers across GPUs instead")])
def test_plan_refusal_says_what_the_runtime_does_instead(runtime, words):
    s = llm.describe(model=MODEL)
    with pytest.raises(UserError) as e:
        llm.plan(s, runtime, ctx=8192, vram=24 * GiB, tensor_parallel_size=2)
    assert "does not read tensor_parallel_size" in str(e.value)
    assert words in str(e.value)


def test_no_hint_where_the_runtime_has_none():
    # another refused setting on llama.cpp carries no "instead" (the table is per setting and runtime)
    s = llm.describe(model=MODEL)
    with pytest.raises(UserError) as e:
        llm.plan(s, "llama.cpp", ctx=8192, vram=24 * GiB, gpu_memory_utilization=0.9)
    assert "instead" not in str(e.value)
    assert ("tensor_parallel_size", "vllm") not in PC.INSTEAD


def test_cli_refusal_says_what_the_runtime_does_instead(capsys):
    rc = cli.main(["kv", "--runtime", "llama.cpp", "--model", MODEL, "--tensor-parallel-size", "2", "--vram", "24", "--ctx", "8192"])
    err = capsys.readouterr().err
    assert rc != 0
    assert "does not read --tensor-parallel-size" in err
    assert "llama.cpp splits layers across GPUs instead" in err
