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


def test_qwen3vl_tower_reads_merge_size_output_width_and_temporal_patch():
    """Every bundled Qwen3-VL / 3.5 tower has spatial_merge_size 2, temporal_patch_size 2 and out_hidden_size equal to
    the decoder's width, so a formula that hard-wired 4d, 2 frames or the decoder's width passed every other test
    (each checked once by the mutation). A made-up tower that differs in all three, by hand:
      d 64, 2 blocks, ff 128, patch 4, temporal 1, merge 3 -> m = 9 x 64 = 576, out 100, one deepstack merger, 16 positions
      blocks 2 x (4 x 64^2 + 4 x 64 + 2 x 64 x 128 + 64 + 128 + 4 x 64) = 2 x 33,472 = 66,944
      patch 3 x 1 x 4 x 4 x 64 = 3,072 + bias 64; positions 16 x 64 = 1,024
      two mergers x (576^2 + 576 + 576 x 100 + 100) = 2 x 390,052 = 780,104; norms 2 x 64 + 1 x 2 x 576 = 1,280
      = 852,488 values; F32 among them: 2 x 704 + 64 + 1,024 + 2 x (576 + 100) + 1,280 = 5,128
      the BF16 file: (852,488 - 5,128 - 3,072) x 2 + 5,128 x 4 + 3,072 x 4 = 1,721,376 B"""
    from gpu_garden.memory.llm import mmproj as MP
    v = {"spatial_merge_size": 3, "temporal_patch_size": 1, "out_hidden_size": 100, "deepstack_visual_indexes": [0],
         "num_position_embeddings": 16}
    params, _, f32, patch = MP.qwen3vl_tower(v, 2048, 64, 2, 128, 4)
    assert (params, f32, patch) == (852_488, 5_128, 3_072)
    assert MP.file_bytes(params, f32, patch) == 1_721_376


def test_data_parallel_runtimes_come_from_read_by(monkeypatch, capsys):
    # review27 item 9: refuse_data_parallel named ("vllm", "sglang") and its message by hand beside READ_BY, the table
    # plan() and the CLI refuse settings by; now its row is the one list (narrowed here, the refusal follows it)
    from gpu_garden.memory.llm import plan_checks as PC
    row = next(r for r in PC.READ_BY if r[0] == "data_parallel_size")
    assert row[2] == ("vllm", "sglang")
    monkeypatch.setattr(PC, "READ_BY", tuple(r for r in PC.READ_BY if r is not row) + ((row[0], row[1], ("vllm",)),))
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    with pytest.raises(UserError, match=r"sglang has no data parallelism \(data_parallel_size is vLLM's\)"):
        llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, tensor_parallel_size=4, data_parallel_size=2, dp_attention=True)
    monkeypatch.undo()
    # the CLI refuses the option by the same row, before any plan
    assert cli.main(["kv", "--model", "Qwen/Qwen3-30B-A3B", "--runtime", "ollama", "--data-parallel-size", "2"]) != 0
    assert "does not read --data-parallel-size (vLLM, SGLang)" in capsys.readouterr().err


def test_an_unreadable_version_is_quoted_short():
    # a 10,000-character --runtime-version was echoed whole in the error line (as version_note already cuts it)
    s = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    with pytest.raises(UserError) as e:
        llm.plan(s, "ollama", ctx=4096, vram=12 * GiB, runtime_version="0." * 5000, gpu_name="Apple M2")
    assert "cannot read a version from '0.0.0." in str(e.value) and len(str(e.value)) < 300
