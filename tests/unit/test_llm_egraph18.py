"""vLLM's CUDA-graph memory by engine and version (task egraph18): the capture list each version builds, the part
of the first capture that does not shrink with the batch, and the platforms whose graphs stay outside the share.
Expected values are figures the runs printed (benchmarks/data/llm_measured.json, thread named per test) or the
capture list read from vLLM's source; tolerances are the printed rounding plus a few hundredths of a GiB, far
below the 2x a wrong capture list gives."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm as V, vllm_overheads as VO

GiB, MiB = 1 << 30, 1 << 20


def spec(name):
    return llm.describe(model=name)


def graphs(version, seqs, engine=None, batched=None, **extra):
    knobs = {"max_num_seqs": seqs, "vllm_engine": engine, "max_num_batched_tokens": batched, **extra}
    return VO.graph_memory(V.settings(version, 24 * GiB, 8192, {k: v for k, v in knobs.items() if v is not None}))


def test_capture_list_by_engine_and_version():
    # V1 0.8-0.9 captures [1, 2, 4, 8 ... 512] whatever max_num_seqs (0.9.2 cuda_graph_sizes default [512]);
    # from 0.10 up to min(2 x max_num_seqs, 512); V0 up to the first of [1, 2, 4, 8k] >= max_num_seqs
    one = {"max_seqs": 1, "max_batched": 8192, "enforce_eager": False}
    assert VO.capture_size(dict(one, v1=True, version=(0, 9, 2))) == 512
    assert VO.capture_size(dict(one, v1=True, version=(0, 10, 0))) == 2
    assert VO.capture_size(dict(one, v1=True, version=(0, 17, 1), max_seqs=3)) == 6
    assert VO.capture_size(dict(one, v1=True, version=(0, 17, 1), max_seqs=3, spec_tokens=2)) == 18
    assert VO.capture_size(dict(one, v1=True, version=(0, 11), max_seqs=256, max_batched=256)) == 256  # cut at batched
    assert VO.capture_size(dict(one, v1=False, version=(0, 8, 5), max_seqs=3)) == 4
    assert VO.capture_size(dict(one, v1=False, version=(0, 8, 5), max_seqs=290)) == 296
    # so one sequence on 0.9.2's V1 still holds the whole default list's graphs, on 0.11 only the first capture's
    assert graphs((0, 9, 2), 1, engine="v1") == VO.CUDA_GRAPHS
    assert graphs((0, 11, 0), 1) < 0.1 * GiB


def test_v0_graphs_grow_past_256_sequences_unsloth_rows():
    # RLinf/Unsloth V0 runs of Qwen2.5-0.5B (vLLM 0.8.5 / 0.10.0 with VLLM_USE_V1=0) print "Graph capturing
    # finished ... took" 0.35 / 0.40 / 0.55 / 0.60 GiB at 160 / 192 / 288 / 320 sequences: V0 captures up to
    # max_num_seqs, so the graphs keep growing past 256 (the old min(seqs, 256) gave 0.50 for both of the last two)
    for seqs, printed in ((160, 0.35), (192, 0.40), (288, 0.55), (320, 0.60)):
        r = llm.plan(spec("Qwen/Qwen2.5-0.5B-Instruct"), "vllm", ctx=32768, vram=24 * GiB, max_num_seqs=seqs,
                     runtime_version="0.8.5", vllm_engine="v0")
        assert abs(r["overhead"]["cuda_graphs"] / GiB - printed) <= 0.045, (seqs, r["overhead"]["cuda_graphs"] / GiB)


def test_v1_first_capture_kept_at_few_sequences_gemma4_spark():
    # sostrowsk/dgx-spark-local-llm (0.25.1, --max-num-seqs 32): "Estimated CUDA graph memory: 0.14 GiB" (AWQ) and
    # 0.13 GiB (NVFP4); graphs scaled by the batch alone gave 0.06 GiB
    g = graphs((0, 25, 1), 32) / GiB
    assert 0.115 <= g <= 0.155, g
    # the default list keeps vLLM 0.21's own estimate for Qwen3-8B at 256 sequences (LMCache#3430: 0.52 GiB)
    assert abs(graphs((0, 21, 0), 256) / GiB - 0.52) <= 0.03


def test_v0_default_sequences_on_a_large_card():
    # _set_default_args_v0 (0.9.2) sets 256 sequences on any card; the 1024 of a >= 70 GiB card is V1's
    assert V.settings((0, 9, 2), 80 * GiB, 8192, {"vllm_engine": "v0"})["max_seqs"] == 256
    assert V.settings((0, 9, 2), 80 * GiB, 8192, {})["max_seqs"] == 1024


def test_graph_estimate_subtracted_on_cuda_only():
    # gpu_worker.determine_available_memory (0.21.0) measures the estimate only when current_platform.is_cuda():
    # on ROCm the graphs are captured after the pool, outside the share, as before 0.21
    s = spec("Qwen/Qwen2.5-7B-Instruct")
    kw = dict(ctx=8192, vram=31.86 * GiB, gpu_memory_utilization=0.9, runtime_version="0.21.0")
    cuda = llm.plan(s, "vllm", gpu_name="NVIDIA GeForce RTX 5090", **kw)
    rocm = llm.plan(s, "vllm", gpu_name="AMD Radeon AI PRO R9700", **kw)
    assert cuda["overhead"]["cuda_graphs"] == rocm["overhead"]["cuda_graphs"] > 0
    assert rocm["kv_capacity_bytes"] - cuda["kv_capacity_bytes"] == rocm["overhead"]["cuda_graphs"]
    assert V.on_rocm({"runtime_version": "0.19.1+rocm7.13"}) and not V.on_rocm({"gpu_name": "NVIDIA A100"})
    # Intel XPU captures none by default (0.19.1 / 0.21.0: VLLM_XPU_ENABLE_XPU_GRAPH=0; 0.10.1 / 0.11.0: NONE)
    # but 0.17.1 does with torch >= 2.11
    xpu = llm.plan(s, "vllm", gpu_name="Intel Arc Pro B70", **kw)
    assert xpu["overhead"]["cuda_graphs"] == 0
    assert graphs((0, 17, 1), 256, gpu_name="Intel Arc Pro B70") == VO.CUDA_GRAPHS
