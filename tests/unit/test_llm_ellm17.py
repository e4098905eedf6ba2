"""Batch 33, after first sight (task ellm17): rules read from the runtimes' sources, each with hand arithmetic."""
import pytest

from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


@pytest.mark.parametrize("asked", ["fp8", "FP8", "fp8_e4m3"])
def test_sglang_fp8_cache_is_fp8_e4m3(asked):
    # sglang#35777 (0.5.17): RadixArk/Qwen3.8-27B-NVFP4, kv_cache_quant_algo FP8 under --kv-cache-dtype auto. No SGLang
    # release takes `--kv-cache-dtype fp8` (server_args choices auto, fp8_e5m2, fp8_e4m3, bf16, ...); auto gives an FP8
    # checkpoint torch.float8_e4m3fn (model_runner configure_kv_cache_dtype). Qwen3.8-27B: 16 attention layers x 4 KV
    # heads x 256 x (K, V) x 1 byte = 32768 bytes a token (16-bit: 65536)
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    r = llm.plan(s, "sglang", ctx=262144, kv_dtype=asked, weights_dtype="nvfp4", vram=31.36 * GiB, mem_fraction_static=0.8)
    assert r["kv_dtype"] == "fp8_e4m3"
    assert r["kv_per_token"] == 16 * 4 * 256 * 2 * 1
    assert "--kv-cache-dtype fp8_e4m3" in r["command"]
    f16 = llm.plan(s, "sglang", ctx=262144, weights_dtype="nvfp4", vram=31.36 * GiB, mem_fraction_static=0.8)
    assert f16["kv_per_token"] == 16 * 4 * 256 * 2 * 2 and "--kv-cache-dtype" not in f16["command"]


def test_sglang_refuses_other_caches_with_the_way_out():
    with pytest.raises(llm.UserError, match="fp8_e5m2"):
        llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "sglang", ctx=4096, kv_dtype="q8_0")


@pytest.mark.parametrize("v, want", [("0.1.dev19754+g3a0914114", None), ("0.0.0.dev1+gd91c3682b", None),
                                     ("0.1.0", (0, 1, 0)), ("0.10.1.dev101", (0, 10, 1))])
def test_untagged_build_is_a_commit_not_release_0_1(v, want):
    # vllm/vllm-openai:qwen38 (vllm-project/recipes#831) prints 0.1.dev19754+g3a0914114: setuptools-scm's version of a
    # checkout with no tag in reach (its default 0.1.devN+g<hash>), an August 2026 build, not vLLM 0.1
    from gpu_garden.memory.llm.runtimes import parse_version, version_note
    assert parse_version(v, "vllm") == want
    assert ("names a commit" in (version_note(v, "vllm") or "")) == (want is None)
