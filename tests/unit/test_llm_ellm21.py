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
