"""fix17 (review17 K4, K6): bench_llm's scoring gates, each tied to the print or the backend it rests on."""
from support.pack import load_benchmark

MiB = 1 << 20

# Kelsidavis/rusteze llama_test.log (b7780, RTX 5080): "9718 MiB of free device memory" read by the fit step
ROW = {"id": "t", "runtime": "llama.cpp", "version": "b7780", "vram_gib": 9718 / 1024, "vram_reading": "llamacpp_free",
       "inferred": {"vram_gib": "the fit step's free device memory, 9718 MiB"},
       "input": {"model": "Qwen/Qwen2.5-Coder-7B-Instruct", "weights_dtype": "Q8_0", "ctx": 32768, "parallel": 1,
                 "kv_dtype": "f16", "flash_attn": "on", "ubatch": 512, "ngl": 99}}


def test_k6_the_cuda_context_goes_back_on_cuda_and_hip_rows_only():
    b = load_benchmark("bench_llm")
    assert b._plan(dict(ROW, gpu="NVIDIA GeForce RTX 5080 16 GB"))[1]["vram"] == (9718 + 384) * MiB
    assert b._plan(dict(ROW, gpu="AMD Radeon Pro VII 16 GB (gfx906, ROCm)"))[1]["vram"] == (9718 + 384) * MiB
    # Metal's recommendedMaxWorkingSetSize and Vulkan's heap budget hold no CUDA context: such rows carry no
    # vram_reading (the data never marks them: test_llm_ellm18b), so vram is as read
    unmarked = {k: v for k, v in ROW.items() if k != "vram_reading"}
    assert b._plan(dict(unmarked, gpu="Apple M4, 16 GB unified memory"))[1]["vram"] == 9718 * MiB
    assert b._plan(dict(unmarked, id="llamacpp-x-1070ti-vulkan-8k", gpu="NVIDIA GeForce GTX 1070 Ti 8 GB"))[1]["vram"] == 9718 * MiB


def test_k4_the_self_memory_tolerance_needs_the_figure_itself():
    """[C, C + 1) is for a kv_mib that is the quoted self column; a note that only names "self-memory" (another
    figure, another context) leaves the half-unit tolerance of a KV buffer line."""
    b = load_benchmark("bench_llm")
    quoted = {"runtime": "llama.cpp", "measured": {"kv_mib": 1074.0}, "notes": ["f16/f16 at 32K, 1074 MiB of KV self-memory"]}
    assert b.kv_exact(quoted, "kv_mib", 1074.6, "MiB")
    other = dict(quoted, notes=["the 131K run's table lists 4146 MiB of KV self-memory; this row reads the KV buffer line"])
    assert not b.kv_exact(other, "kv_mib", 1074.6, "MiB")
    assert b.kv_exact(other, "kv_mib", 1074.004, "MiB")


def test_rel_err_of_a_zero_printed_buffer():
    # batch 101's ik328 row: -ngl 0 prints 'CUDA0 model buffer size = 0.00 MiB'; a ratio to zero raised ZeroDivisionError
    load_benchmark("bench_llm")  # puts benchmarks/ on the path
    import llm_score
    assert abs(llm_score.rel_err(110.0, 100.0) - 0.10) < 1e-12
    assert llm_score.rel_err(0.0, 0.0) == 0.0
    assert llm_score.rel_err(0.4, 0.0) == 0.0
    assert llm_score.rel_err(512.0, 0.0) == 1.0
