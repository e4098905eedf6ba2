"""Round ellm21 (fits misses, after first sight, regression rows): each test from vLLM's source or hand arithmetic."""
import pytest

from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _fixed_pool(vram_gib, pool_gib):
    # Llama-3.1-8B bf16 (vLLM prints "Loading model weights took 14.99 GiB", vllm#10517) at 20,000 batched tokens, whose
    # profile peak vllm#10517 prints as 2.07 GiB; eager (no graph pool), one sequence (a sampler of 0.5 MB)
    s = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    return llm.plan(s, "vllm", ctx=8192, vram=vram_gib * GiB, runtime_version="0.10.1", kv_cache_memory=int(pool_gib * GiB),
                    max_num_batched_tokens=20000, max_num_seqs=1, enforce_eager=True)


@pytest.mark.parametrize("vram, pool, fits", [
    # gpu_worker.determine_available_memory with kv_cache_memory_bytes: profile_run, then "reserved N GiB memory for KV
    # Cache ... and skipped memory profiling": the pool is allocated after the profile's activations are freed, so what
    # stays is 14.99 weights + the pool + 0.5 CUDA context (+ a few tens of MiB outside PyTorch)
    (22.5, 6.0, True),    # 14.99 + 6.0 + 0.5 = 21.49 <= 22.5 (the old sum added the 2.07 peak: 23.56, refused)
    (22.5, 7.2, False),   # 14.99 + 7.2 + 0.5 = 22.69 > 22.5: the pool itself does not fit beside the weights
    # the profile still runs first: 14.99 + 2.07 + 0.5 = 17.56 > 17.0, though 14.99 + 1.0 + 0.5 = 16.49 would stay
    (17.0, 1.0, False),
])
def test_a_fixed_pool_is_held_beside_the_weights_not_beside_the_profile_peak(vram, pool, fits):
    r = _fixed_pool(vram, pool)
    assert r["fits_as_requested"] is fits


def test_a_fixed_pool_total_is_weights_pool_and_context():
    r = _fixed_pool(22.5, 6.0)
    # 14.99 + 6.0 + 0.5 GiB CUDA context = 21.49 GiB, plus vLLM's non-torch memory (under 0.1 GiB on one GPU)
    assert 21.45 * GiB < r["total"] < 21.6 * GiB


# Qwen3.6-27B's DeltaNet state, as Ollama's kvcache.Recurrent holds it (f32): 48 linear layers x (conv: 3 x (2 x 16 x
# 128 + 48 x 128) x 4 = 122,880 B + delta: 128 x 128 x 48 x 4 = 3,145,728 B) = 156,893,184 B a slot
QWEN36_STATE = 48 * (3 * (2 * 16 * 128 + 48 * 128) * 4 + 128 * 128 * 48 * 4)


def _ollama(model, version, ctx=8192, parallel=1):
    s = llm.describe(model=model)
    return llm.plan(s, "ollama", ctx=ctx, parallel=parallel, vram=23.6 * GiB, runtime_version=version)


@pytest.mark.parametrize("version, parallel, copies", [
    ("0.24.0", 1, 24),   # kvcache.DefaultCheckpointCount = 24, every slot's entries reserved at load
    ("0.24.0", 2, 48),   # per slot: maxSequences = num_parallel
    ("0.17.1", 1, 24),   # qwen35's first engine tag already uses the shared Recurrent cache
    ("0.17.0", 1, 0),    # qwen35 not on Ollama's own engine yet (the llama runner's estimate: no checkpoints)
])
def test_ollama_keeps_recurrent_checkpoints_per_slot(version, parallel, copies):
    r = _ollama("qwen3.6:27b", version, parallel=parallel)
    assert r["overhead"].get("state_checkpoints", 0) == copies * QWEN36_STATE


def test_qwen3next_own_cache_kept_32_checkpoints():
    # model/models/qwen3next/checkpoints.go checkpointCountDefault = 32 (v0.15.5 to v0.17.1-rc0); Qwen3-Next-80B-A3B:
    # 36 linear layers x (3 x (2 x 16 x 128 + 32 x 128) x 4 + 128 x 128 x 32 x 4) = 79,036,416 B a slot
    state = 36 * (3 * (2 * 16 * 128 + 32 * 128) * 4 + 128 * 128 * 32 * 4)
    r = _ollama("qwen3-next:80b", "0.16.0")
    assert r["overhead"]["state_checkpoints"] == 32 * state
    assert _ollama("qwen3-next:80b", "0.24.0")["overhead"]["state_checkpoints"] == 24 * state


def test_ollama_size_with_checkpoints_matches_ps():
    # bric.pe.kr's 3090 sweep, Ollama 0.24.0, qwen3.6:27b at num_ctx 8192, all on the GPU: ps SIZE 22.1 GB = 20.58 GiB
    # (the runner's allocations; the CUDA context is not one). Without the 24 x 149.6 MiB of checkpoints the plan
    # had 17.1 GiB there
    r = _ollama("qwen3.6:27b", "0.24.0")
    assert abs((r["total"] - r["overhead"]["cuda_context"]) / GiB - 20.58) < 0.4


def test_a_fixed_pool_plan_does_not_say_the_share_holds_it(capsys):
    # with --kv-cache-memory vLLM "does not respect the gpu_memory_utilization config" for the pool: the printed
    # figure is weights + pool + the memory outside PyTorch's peak, not "its share + outside it"
    from gpu_garden.memory import cli
    cli.main(["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", "vllm", "--runtime-version", "0.10.1",
              "--ctx", "8192", "--vram", "22.5", "--kv-cache-memory", "6", "--max-num-batched-tokens", "20000",
              "--max-num-seqs", "1", "--enforce-eager"])
    out = capsys.readouterr().out
    assert "the fixed KV pool" in out and "its share, the KV pool" not in out
