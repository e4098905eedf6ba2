"""Batch 47, after first sight (task ellm19b): SGLang's pool splits read from its source, each with hand arithmetic."""
import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import sglang as SG

GiB, MiB = 1 << 30, 1 << 20
# one GPU, mem_fraction_static 0.9 of 20 GiB free once the 512 MiB context is up, 8 GiB of weights: rest = 10 GiB
VRAM, W, MFS = 20 * GiB + 512 * MiB, 8 * GiB, 0.9


# Gemma-4-26B-A4B (a hybrid sliding-window model for SGLang: is_hybrid_swa_model): a token's bf16 cache is
# 5 full layers x 2 heads x 512 x (K + V) x 2 bytes = 20480 and 25 sliding layers x 8 x 256 x 2 x 2 = 204800.
# set_num_tokens_hybrid_swa: full tokens = rest / (F + r x S), the sliding pool r x that.
def test_sglang_swa_pool_takes_the_ratio_of_the_sliding_layers():
    spec = llm.describe(model="google/gemma-4-26B-A4B-it")
    ev = SG.evaluate(spec, 262144, "bf16", W, VRAM, 1, MFS, swa_ratio=0.0625)
    assert ev["tokens"] == 10 * GiB // (20480 + 0.0625 * 204800) == 322638
    assert ev["swa_tokens"] == int(322638 * 0.0625) == 20164
    # SGLang's default ratio 0.8: 20480 + 163840 = 184320 bytes a token
    assert SG.evaluate(spec, 262144, "bf16", W, VRAM, 1, MFS)["tokens"] == 10 * GiB // 184320 == 58254


def test_sglang_gemma3_sliding_layers_stay_full():
    # Gemma 3 is not in is_hybrid_swa_model: every layer holds every token (62 layers x 16 x 128 x 2 x 2 for the 27B)
    spec = llm.describe(model="google/gemma-3-27b-it")
    assert SG.cell_bytes(spec, "bf16") == 62 * 16 * 128 * 2 * 2
    with pytest.raises(UserError, match="--swa-full-tokens-ratio .* drop it"):
        llm.plan(spec, "sglang", ctx=8192, kv_dtype="bf16", vram=80 * GiB, swa_full_tokens_ratio=0.5)


# --max-mamba-cache-size N: exactly N request states come out of rest (handle_max_mamba_cache's explicit branch),
# not the --mamba-full-memory-ratio split (33 states for these figures, test_llm_ellm19). Qwen3.6-27B: a state is
# 153,944,064 bytes, a token's fp8 cache 32768.
def test_sglang_max_mamba_cache_size_sets_the_states():
    spec = llm.describe(model="Qwen/Qwen3.6-27B")
    ev = SG.evaluate(spec, 131072, "fp8_e4m3", W, VRAM, 1, MFS, mamba_cache=8)
    assert ev["mamba_slots"] == 8
    assert ev["tokens"] == (10 * GiB - 8 * 153944064) // 32768 == 290096


def test_max_mamba_cache_size_refused_without_recurrent_layers():
    spec = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    with pytest.raises(UserError, match="--max-mamba-cache-size .* no recurrent layers"):
        llm.plan(spec, "sglang", ctx=8192, vram=80 * GiB, max_mamba_cache_size=8)


def test_cli_swa_ratio_is_sglang_only(capsys):
    rc = cli.main(["kv", "--model", "google/gemma-4-26B-A4B-it", "--runtime", "vllm", "--ctx", "8192",
                   "--vram", "24", "--swa-full-tokens-ratio", "0.0625"])
    assert rc != 0
    assert "--swa-full-tokens-ratio (SGLang)" in capsys.readouterr().err


@pytest.mark.parametrize("knob,value", [("swa_full_tokens_ratio", 0), ("swa_full_tokens_ratio", 1.5),
                                        ("max_mamba_cache_size", 0), ("max_mamba_cache_size", 2.5)])
def test_pool_split_knobs_refuse_bad_values(knob, value):
    spec = llm.describe(model="google/gemma-4-26B-A4B-it" if knob.startswith("swa") else "Qwen/Qwen3.6-27B")
    with pytest.raises(UserError, match="must be"):
        llm.plan(spec, "sglang", ctx=8192, vram=80 * GiB, **{knob: value})


# Devstral-Small-2-24B-Instruct-2512, built in from a real copy of a checkpoint's config.json (its _source): 40 layers
# of 8 KV heads x 128. At TP 2 with an fp8 cache a token is 40 x 4 x 128 x 2 x 1 = 40960 bytes. mattbucci's 3090 rig
# (batch 36's row) says --mem-fraction-static 0.85 -> 0.90 took the pool from "172K" to 202,043 tokens: 0.05 of the
# 22.93 GiB SGLang sees (23.56 less the 512 MiB context and 0.13 GiB of NCCL) is 30,055 tokens of 40960 bytes, which
# leaves 171,988 at 0.85.
def test_devstral_small_2_is_built_in():
    spec = llm.describe(model="mistralai/Devstral-Small-2-24B-Instruct-2512")
    assert spec.name == "Devstral-Small-2-24B"
    assert SG.cell_bytes(spec, "bf16") == 40 * 8 * 128 * 2 * 2 == 163840
    assert SG.cell_bytes(llm.vllm_per_rank(spec, 2), "fp8_e4m3") == 40960
    free0 = 23.56 * GiB - 512 * MiB - int(0.13 * GiB)
    assert 202043 - 0.05 * free0 / 40960 == pytest.approx(172000, abs=500)
