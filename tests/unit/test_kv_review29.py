"""Task review29: mends to sessions 25-26's kv rounds 56-58 and fix31 (findings: /work/tools/s26/review29.md).
Expected figures are derived by hand in the comments, never from the code under test."""
from dataclasses import replace

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


# Qwen3-VL-30B-A3B's tower (its config.json's vision_config: depth 27, hidden d 1152, ff 4304, patch 16, temporal 2,
# 2304 positions, spatial merge 2 -> 4d = 4608, out_hidden_size 2048, deepstack_visual_indexes 8/16/24):
#   27 blocks x (q k v o 4 x 1152^2 + biases 4 x 1152 + fc1 fc2 2 x 1152 x 4304 + biases 1152 + 4304 + two LayerNorms
#                4 x 1152) = 27 x 15,239,504 = 411,466,608
#   patch Conv3d 3 x 2 x 16 x 16 x 1152 = 1,769,472 + bias 1,152; positions 2304 x 1152 = 2,654,208
#   four mergers (the output and three deepstack) x (fc1 4608^2 + 4608 + fc2 4608 x 2048 + 2048) = 4 x 30,677,504
#   = 122,710,016; the output merger's LayerNorm on d 2 x 1152 = 2,304; the deepstack ones on 4d 3 x 2 x 4608 = 27,648
#   = 538,631,408 values, 1,077,262,816 B at 16 bits (a generic ViT of the same widths: 797.89 MiB)
QWEN3VL_30B_TOWER_BYTES = 2 * 538_631_408


def _q3vl(model_type):
    s = llm.describe(model="Qwen/Qwen3-VL-30B-A3B-Instruct")
    return replace(s, vision=dict(s.vision, model_type=model_type))


@pytest.mark.parametrize("model_type", ["qwen3_vl_moe", "qwen3_vl_moe_vision"])
def test_qwen3_vl_moe_configs_spelling_is_qwen3_vl_tower(model_type):
    # Qwen3-VL MoE's config.json names its vision_config qwen3_vl_moe (transformers Qwen3VLMoeVisionConfig); given
    # with --config it fell to the generic ViT: 797.89 MiB instead of the tower's 1,027.36 MiB, and no word said so
    r = llm.plan(_q3vl(model_type), "ollama", ctx=4096, vram=80 * GiB, weights_dtype="Q4_K_M")
    assert r["projector"]["weights"] == QWEN3VL_30B_TOWER_BYTES
    assert not any("not a tower kv describes" in n for n in r["notes"])


@pytest.mark.parametrize("runtime, knobs", [("ollama", {"weights_dtype": "Q4_K_M"}), ("vllm", {}),
                                            ("sglang", {}), ("llama.cpp", {"weights_dtype": "Q4_K_M", "mmproj": True})])
def test_a_tower_family_kv_does_not_describe_is_said(runtime, knobs):
    r = llm.plan(_q3vl("internvl_vision"), runtime, ctx=4096, vram=80 * GiB, **knobs)
    assert any("'internvl_vision' is not a tower kv describes" in n for n in r["notes"]), r["notes"]


def test_described_towers_carry_no_such_note():
    for model in ("Gemma-3-27B", "LLaVA-1.5-7B", "Qwen/Qwen3-VL-30B-A3B-Instruct", "Qwen/Qwen3.6-27B"):
        r = llm.plan(llm.describe(model=model), "ollama", ctx=4096, vram=80 * GiB, weights_dtype="Q4_K_M")
        assert not any("not a tower kv describes" in n for n in r["notes"]), model


def test_mmproj_says_which_file_it_priced():
    # kv has no input for the mmproj file's type: the BF16 file is priced, and the plan says so (an F16 file differs
    # in the patch embedding, a Q8_0 one in every matrix)
    s = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    r = llm.plan(s, "llama.cpp", ctx=4096, vram=80 * GiB, weights_dtype="Q4_K_M", mmproj=True)
    assert any(n.startswith("--mmproj: the projector is priced as a BF16 mmproj file") for n in r["notes"])
    r = llm.plan(s, "llama.cpp", ctx=4096, vram=80 * GiB, weights_dtype="Q4_K_M")
    assert not any(n.startswith("--mmproj:") for n in r["notes"])
