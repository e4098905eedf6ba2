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
                                     ("0.1.0", (0, 1, 0)), ("0.10.1.dev101", (0, 10, 0, 1 << 30, -1))])
def test_untagged_build_is_a_commit_not_release_0_1(v, want):
    # vllm/vllm-openai:qwen38 (vllm-project/recipes#831) prints 0.1.dev19754+g3a0914114: setuptools-scm's version of a
    # checkout with no tag in reach (its default 0.1.devN+g<hash>), an August 2026 build, not vLLM 0.1
    from gpu_garden.memory.llm.runtimes import parse_version, version_note
    assert parse_version(v, "vllm") == want
    assert ("names a commit" in (version_note(v, "vllm") or "")) == (want is None)


# Qwen3.8-27B's pool page: a gated-DeltaNet state of 3 x (2 x 16 x 128 + 48 x 128) conv values x 2 bytes + 48 x 128 x
# 128 fp32 values = 3,207,168 bytes sets the attention block to 16 x ceil(3,207,168 / (16 x 4096)) = 784 tokens of
# 4 KV heads x 256 x (K, V) x 2 bytes: a page of 784 x 4096 = 3,211,264 bytes, 16 tensors a block (16 full layers)
PAGE = 784 * 4 * 256 * 2 * 2


@pytest.mark.parametrize("seqs, eager, version, starts", [
    (1001, None, None, False), (1001, None, "0.20.0", False), (1000, None, None, True),
    (1001, True, None, True), (1001, None, "0.17.1", True)])
def test_vllm_refuses_more_sequences_than_mamba_blocks(seqs, eager, version, starts):
    # vllm-project/recipes#831: 'max_num_seqs (1024) exceeds available Mamba cache blocks (939)' (gpu_model_runner
    # _check_and_update_cudagraph_mode: max_num_reqs > kv_cache_config.num_blocks with full CUDA graphs; 0.17.1 started,
    # 0.20.0 refused). A 1000-block pool (--kv-cache-memory 1000 x 16 x PAGE)
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    r = llm.plan(s, "vllm", ctx=32768, weights_dtype="fp8", vram=94.97 * GiB, kv_cache_memory=1000 * 16 * PAGE,
                 max_num_seqs=seqs, enforce_eager=eager, runtime_version=version)
    assert r["fits_as_requested"] is starts
    assert any("exceeds the pool's 1000 Mamba cache blocks" in n for n in r["notes"]) is not starts


@pytest.mark.parametrize("parallel", [1, 4])
def test_the_flags_lower_max_num_seqs_under_the_mamba_blocks(parallel):
    # the same 1000-block pool at vLLM's 1024 default: the fix of least change is --max-num-seqs down to the requests
    # at once (no larger share, no --enforce-eager). vLLM's default, not given: a --max-num-seqs 1024 the user gives is
    # printed as given (kv55), and the plan turns to --enforce-eager instead
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    r = llm.plan(s, "vllm", ctx=32768, parallel=parallel, weights_dtype="fp8", vram=94.97 * GiB,
                 kv_cache_memory=1000 * 16 * PAGE)
    assert r["fits"] is True
    assert f"--max-num-seqs {parallel} " in r["command"] and "--enforce-eager" not in r["command"]
    given = llm.plan(s, "vllm", ctx=32768, parallel=parallel, weights_dtype="fp8", vram=94.97 * GiB,
                     kv_cache_memory=1000 * 16 * PAGE, max_num_seqs=1024)
    assert given["fits_as_requested"] is False and given["fits"] is True
    assert " --max-num-seqs 1024 " in given["command"] and given["command"].endswith(" --enforce-eager")


def test_llamacpp_mtp_drafter_counts_its_context_and_snapshots():
    # sudoingX/qwen38-mtp: llama-server --spec-type draft-mtp --spec-draft-n-max 2 on Qwen3.8-27B Q4_K_M (modelled since
    # task llamtp: test_llm_llamtp.py holds the arithmetic); the MTP context's compute buffer is said not counted
    r = llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "llama.cpp", ctx=131072, weights_dtype="Q4_K_M", mtp_tokens=2)
    assert {"mtp_state_snapshots", "mtp_draft_kv"} <= set(r["overhead"])
    assert any("compute buffer" in n and "not counted" in n for n in r["notes"])


def test_llamacpp_keeps_gemma4_12b_sliding_window():
    # llama.cpp converts Gemma4UnifiedForConditionalGeneration with Gemma4UnifiedModel(Gemma4Model): arch gemma4, whose
    # sliding layers keep the window (club-3090: Gemma-4-12B UD-Q8_K_XL at -c 262144, q8_0, one RTX 3090). q8_0 = 34
    # bytes a 32-value block: 8 global layers x 262144 cells x (1 x 512 K + 1 x 512 V) x 34/32 + 40 sliding layers x
    # (1024 window + 512 ubatch) cells x (8 x 256 x 2) x 34/32
    s = llm.describe(model="google/gemma-4-12B-it")
    r = llm.plan(s, "llama.cpp", ctx=262144, kv_dtype="q8_0", flash_attn="on", weights_dtype="Q8_0", ngl=99,
                 runtime_version="b10236")
    assert r["kv_total"] == 8 * 262144 * 1024 * 34 // 32 + 40 * 1536 * 4096 * 34 // 32
