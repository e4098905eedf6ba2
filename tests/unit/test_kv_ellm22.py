"""Task ellm22 (kv-accuracy round 47): batch 54 read after its first sight. Each test fails when its rule is broken on
purpose (the commit says how). Expected values are worked here from the model's geometry, not taken from kv."""
import math

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import llamacpp as LC
from gpu_garden.memory.units import GiB, MiB

# gpt-oss-20b: 24 layers alternating sliding (128) and full attention, 8 KV heads x 64; a full-attention layer's f16
# cache is 12 layers x 8 x 64 x 2 (K and V) x 2 bytes a cell
GPTOSS_FULL_CELL = 12 * 8 * 64 * 2 * 2


def _gptoss_t4(ctx, free_gib=14.64, **kw):
    # ghghang2/my-repo's llama-server -hf unsloth/gpt-oss-20b-GGUF:F16 on a T4 (build 7772): no -c, -np auto (4,
    # unified), -fa auto, -ub 512; free_gib the fit step's free reading (kv adds the CUDA context it leaves out)
    return llm.plan(llm.describe(model="openai/gpt-oss-20b"), runtime="llama.cpp", ctx=ctx, parallel=4,
                    kv_unified=True, kv_dtype="f16", weights_dtype="F16", flash_attn="auto", ubatch=512,
                    vram=free_gib * GiB + LC.CUDA_CONTEXT, runtime_version="b7772", **kw)


# 1. llama.cpp's fit step, -c not given: it lowers the model's context by interpolating its own projection between the
# model's context and fit_params_min_ctx, then rounds down to 256 cells ("round down context for CUDA backend"); it
# changes n_ctx, then the layers and the split, never -ub or -fa. kv took the largest context of its suggested flags
# (-ub 256, -fa on: a smaller compute buffer), 74240 cells on the 14.64 GiB row, which at the run's own -ub 512 does
# not fit the 1 GiB target (the plan said so). Breaking it: _llamacpp_fit_ctx back on max_ctx_by_kv_dtype.
def test_llamacpp_fit_lowers_the_context_at_the_runs_own_settings():
    r = _gptoss_t4(None)
    assert r["fits_as_requested"], r["ctx"]
    assert r["ctx"] % 256 == 0 and 4096 < r["ctx"] < 131072
    # the largest such context: 256 cells more (asked with -c) do not fit at the same settings
    assert not _gptoss_t4(r["ctx"] + 256)["fits_as_requested"]
    # its cache: the full-attention layers' cells plus the sliding layers' window cells, as the run prints them (the
    # row's 64000 cells: 1500.00 + 24.00 MiB)
    swa = r["kv_total"] - r["ctx"] * GPTOSS_FULL_CELL
    assert swa == 24 * MiB, swa / MiB
    # the printed context is within 1536 cells of kv's (the model buffer kv sizes 30 MiB under the printed one and the
    # compute buffer it keeps flat, which llama.cpp's projection at 131072 prices 15 MiB higher)
    assert 0 <= r["ctx"] - 64000 <= 1536, r["ctx"]


# 2. bench_llm scores the cache of a llama.cpp run without -c at the context its fit step chose ("context size reduced
# from 131072 to 64000": buffers of 64000 cells), kv's own fit step at ctx None; the verdict stays at the model's
# context (fit false). Before, the row's 131072 sized a 3096 MiB cache against the printed 1524 (+103 %). Breaking it:
# fit_lowered_ctx always False.
def test_bench_scores_a_fit_lowered_cache_at_the_fit_steps_context():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    row = {"id": "t", "runtime": "llama.cpp", "version": "b7772", "url": "u", "vram_gib": 14.64,
           "vram_reading": "llamacpp_free", "gpu": "Tesla T4", "inferred": {"vram_gib": "the fit step's free reading"},
           "input": {"model": "openai/gpt-oss-20b", "weights_dtype": "F16", "ctx": 131072, "parallel": 4,
                     "kv_unified": True, "kv_dtype": "f16", "flash_attn": "auto", "ubatch": 512},
           "measured": {"kv_mib": 1524.0, "fit": False},
           "notes": ["'context size reduced from 131072 to 64000 -> need 1580 MiB less memory in total'"]}
    s = b.score(row)
    assert s["fits"] == (False, False)
    assert s["ctx_fit"] % 256 == 0 and abs(s["ctx_fit"] - 64000) <= 1536
    # the full-attention cells at that context plus the 24 MiB of window cells
    assert s["kv"][0] == (s["ctx_fit"] * GPTOSS_FULL_CELL + 24 * MiB) / MiB
    # a run whose log names another context (a -c given, or another load) is scored at its own ctx
    other = dict(row, notes=["'context size reduced from 262144 to 64000'"])
    assert b.score(other)["kv"][0] == (131072 * GPTOSS_FULL_CELL + 24 * MiB) / MiB


# 3. An Ollama row quoting its llama runner's KV buffer as printed ("runner lines: ... 'Metal KV buffer size = 1728.00
# MiB' (32768 cells, ...)", keverall/ollama, 0.22.0 on an M4 Pro) is scored against the runner's allocation at q4_0's
# block size (18 bytes a 32 values), and its "kv cache" line (the estimate, half a byte a value) against the estimate.
# Before, the quote's apostrophe and "runner lines:" kept the row on the estimate (1536 against the printed 1728).
# Breaking it: the old OLLAMA_RUNNER_KV_QUOTED; or the allocation on every key (the kv_gib line then reads 1.69).
def test_bench_reads_an_ollama_runner_kv_line_quoted_as_printed():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    values = 32768 * 48 * 8 * 128 * 2        # qwen2.5-coder:14b (Qwen2.5-14B): 48 layers, 8 KV heads x 128, K and V
    row = {"id": "t", "runtime": "ollama", "version": "0.22.0", "url": "u", "vram_gib": 17.3,
           "vram_reading": "ollama_available", "gpu": "Apple M4 Pro, 24 GB unified memory",
           "input": {"model": "qwen2.5-coder:14b", "ctx": 32768, "parallel": 1, "kv_dtype": "q4_0", "flash_attn": True},
           "measured": {"kv_gib": 1.5, "kv_mib": 1728.0},
           "notes": ["runner lines: 'offloaded 49/49 layers to GPU', 'Metal KV buffer size = 1728.00 MiB' (32768 cells, "
                     "48 layers, K/V q4_0 864.00 MiB each)"]}
    assert b.quotes_runner_kv(row)
    s = b.score(row)
    assert s["kv"][0] == values * 18 / 32 / MiB == 1728.0
    assert s["kv_device"][0] == values / 2 / GiB == 1.5
    assert s["kv_exact"]


# 4. vLLM's CUDA graph memory as its log printed it (--cuda-graph-gib). Before 0.21 the graphs are captured after the
# pool is allocated, in what the --gpu-memory-utilization share leaves: 23.56 GiB x (1 - 0.9) less the 512 MiB CUDA
# context = 1.856 GiB a GPU, so 0.19.0's printed 3.65 GiB for Qwen3.5-9B at tensor parallel 4 on 24 GB cards does not
# fit (the LAMBO run's OOM in "Capturing CUDA graphs") where kv's own 0.5 GiB does; from 0.21 the figure is inside the
# share and takes the pool's bytes one for one. Over more than two GPUs kv says the figure is not derived (custom
# all-reduce off without NVLink). Breaking it: graph_memory ignoring graph_given (the verdict stays "fits"), or
# nccl_graphs_unsized always False (no note).
CARD = 23.56 * GiB


def _q35_tp4(version="0.19.0", **kw):
    return llm.plan(llm.describe(model="Qwen/Qwen3.5-9B"), runtime="vllm", ctx=32768, weights_dtype="bf16",
                    tensor_parallel_size=kw.pop("tp", 4), gpu_memory_utilization=0.9, vram=CARD,
                    runtime_version=version, **kw)


def test_vllm_graph_memory_given_decides_the_start_before_0_21():
    room = CARD - math.ceil(0.9 * CARD) - 512 * MiB                            # the share's rest, less the CUDA context
    assert 1.85 * GiB < room < 1.86 * GiB
    assert _q35_tp4()["fits_as_requested"]                                     # kv's own 0.5 GiB fits the room
    assert not _q35_tp4(cuda_graph_memory=int(3.65 * GiB))["fits_as_requested"]
    assert _q35_tp4(cuda_graph_memory=int(1.5 * GiB))["fits_as_requested"]
    # from 0.21 the estimate is subtracted inside the share: the pool shrinks by the difference
    a, b = (_q35_tp4("0.21.0", cuda_graph_memory=int(g * GiB)) for g in (1.0, 3.0))
    assert a["kv_capacity_bytes"] - b["kv_capacity_bytes"] == int(3.0 * GiB) - int(1.0 * GiB)
    # --enforce-eager captures none, whatever was printed before
    assert _q35_tp4(cuda_graph_memory=int(3.65 * GiB), enforce_eager=True)["overhead"]["cuda_graphs"] == 0


def test_vllm_says_the_nccl_graphs_are_not_sized_past_two_pcie_gpus():
    def said(r):
        return any("custom all-reduce off" in n for n in r["notes"])
    assert said(_q35_tp4())
    assert not said(_q35_tp4(tp=2))                                            # the custom all-reduce serves two
    assert not said(_q35_tp4(gpu_name="NVIDIA H100 80GB HBM3"))                # an NVLink (SXM) board
    assert not said(_q35_tp4(gpu_name="NVIDIA A100-SXM4-80GB"))
    assert said(_q35_tp4(gpu_name="NVIDIA GeForce RTX 3090"))
    # review22: on ROCm the custom all-reduce asks for one XGMI hop between every pair, which the MI300-series OAM
    # boards give (vLLM's RocmPlatform.is_fully_connected); PCIe Radeon cards have none
    assert not said(_q35_tp4(gpu_name="AMD Instinct MI300X"))
    assert not said(_q35_tp4(gpu_name="AMD Instinct MI325X"))
    assert said(_q35_tp4(gpu_name="AMD Radeon PRO W7900"))
    assert not said(_q35_tp4(enforce_eager=True))                              # no graphs
    assert not said(_q35_tp4(cuda_graph_memory=int(3.65 * GiB)))               # the figure given


def test_cli_cuda_graph_gib_is_vllms_alone(capsys):
    from support.cli_run import run
    base = ["kv", "--model", "Qwen/Qwen3.5-9B", "--vram", "23.56", "--ctx", "32768", "--runtime-version", "0.19.0",
            "--tensor-parallel-size", "4", "--cuda-graph-gib", "3.65"]
    rc, res, _ = run(base + ["--runtime", "vllm", "--json"], capsys)
    assert res["overhead"]["cuda_graphs"] == int(3.65 * GiB) and res["fits_as_requested"] is False
    rc, _, err = run(["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--vram", "24", "--runtime", "llama.cpp",
                      "--cuda-graph-gib", "1"], capsys)
    assert rc == 2 and "llama.cpp does not read --cuda-graph-gib (vLLM)" in err
