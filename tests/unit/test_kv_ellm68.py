"""Task ellm68 (kv-accuracy round 90, batch 95 after its first sight).

Ollama before 0.30 runs gemma2 (and cohere2, exaone4, starcoder2: none is in fs/ggml OllamaEngineRequired) on its llama
runner, whose vendored llama.cpp keeps llama_context_default_params' swa_full = true (llama/llama.go NewContextParams
does not set it; ollama/ollama v0.18.2 llama/llama.cpp/src/llama-context.cpp:2393), so llama_kv_cache_iswa prints
'using full-size SWA cache' and sizes the SWA cache like the base one; before v0.11.5 the vendored llama.cpp had no
iSWA cache at all. Its estimate (fs/ggml GraphSize) windows only gemma3 ("Gemma2 also has sliding window attention but
we only have an optimized implementation in the Ollama engine", ggml.go:742 at v0.18.2).

gemma2:2b by hand (26 layers alternating sliding (window 4096) and global, 4 KV heads x 256, f16):
  one layer and cell: 4 x 256 x (K + V) x 2 B = 4,096 B
  num_ctx 8192 x parallel 2 = 16,384 cells
  full-size (what 0.18.2 printed, 832.00 + 832.00 MiB for the non-SWA and SWA caches of 13 layers each):
      26 x 4,096 x 16,384 = 1,744,830,464 B = 1664 MiB
  windowed (kv before this round): 13 x 4,096 x 16,384 = 872,415,232 B (832 MiB)
      + 13 x 4,096 x (4,096 x 2 + 512 = 8,704) = 463,470,592 B (442 MiB) = 1274 MiB, the -23 % first sight showed.
"""
import json

MiB = 2 ** 20
ROW = "ollama-ecosystem-gemma2-2b-q40-rx6600-rocm-8k-np2-fit"
FULL = 26 * 4 * 256 * 2 * 2 * 16_384          # 1,744,830,464
WINDOWED = 13 * 4_096 * 16_384 + 13 * 4_096 * (4_096 * 2 + 512)


def _rows():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b, {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}


def test_hand_figures():
    assert FULL == 1_744_830_464 and FULL / MiB == 1664.0 == 2 * 832.0
    assert WINDOWED == 872_415_232 + 463_470_592 and WINDOWED / MiB == 1274.0


def test_ollama_estimate_keeps_gemma2_sliding_layers_full():
    # fails with cache.py's `spec.arch not in OLLAMA_RUNNER_FULL_SWA` removed (1274 MiB)
    b, rows = _rows()
    from llm_score import _plan
    _, res = _plan(rows[ROW])
    assert res["kv_detail"]["sliding_layers"] == FULL // 2
    assert res["kv_total"] == FULL
    s = b.score(rows[ROW])
    assert s["kv"] == (1664.0, 1664.0, "MiB") and s["kv_exact"] is True


def test_llama_runner_allocates_gemma2_full_size():
    # fails with runtimes/ollama.py's `or spec.arch in OLLAMA_RUNNER_FULL_SWA` removed: kv's windowed llama.cpp rule
    # (cache.kv_cache, unified) keeps pad(4,096 x 2 + 512, 32) = 8,704 cells a sliding layer, WINDOWED in all (1274 MiB)
    b, rows = _rows()
    from llm_score import _plan
    _, res = _plan(rows[ROW])
    assert res["ollama_kv_allocated"] == FULL


def test_gemma3_keeps_its_window():
    # Ollama's own engine and GraphSize window gemma3: its sliding layers keep window + 512 cells at one slot
    # (fails with the gemma3 window lost); gemma2's keep num_ctx x parallel = 16,384 (fails with the change reverted)
    from support.pack import load_pack
    load_pack()
    from gpu_garden.memory.llm import kv as K
    from gpu_garden.memory.llm.cache import kv_cache
    spec = K.describe(model="gemma3:4b")
    d = kv_cache(spec, 8192, 1, "f16", "ollama", version=(0, 18, 2))
    assert d["sliding_cells"] == spec.sliding_window + 512 < d["cells"] == 8192
    g2 = K.describe(model="gemma2:2b")
    d2 = kv_cache(g2, 8192, 2, "f16", "ollama", version=(0, 18, 2))
    assert d2["sliding_cells"] == d2["cells"] == 16_384


# --- Ollama's num_batch before 0.30 (runtimes/ollama.py settings: the `ubatch` knob, 512 when not given). llm/server.go
# at v0.18.2: `loadRequest := LoadRequest{... BatchSize: opts.NumBatch ...}` (line 174) and
# `s.ggml.GraphSize(uint64(s.options.NumCtx), uint64(s.loadRequest.BatchSize), ...)` (line 522): the estimate's graph
# is for the asked batch. gemma2:2b at num_batch 256 (GraphSize case "gemma2": fullOffload = max(4 x batch x
# (embedding + vocab), 4 x batch x (2 + context + context x heads + 2 x embedding + 2 x headK x heads))):
#   4 x 256 x (2,304 + 256,000) = 264,503,296 B = 252.25 MiB (printed 'compute graph' 252.2 MiB)
#   4 x 256 x (2 + 16,384 + 16,384 x 8 + 4,608 + 4,096) = 159,909,888 B, smaller
#   at the 512 kv assumed before: 529,006,592 B = 504.5 MiB (total memory 3.63 GiB against 3.4 printed)
GRAPH_256 = 4 * 256 * (2_304 + 256_000)


def test_hand_graph():
    assert GRAPH_256 == 264_503_296 and GRAPH_256 / MiB == 252.25
    assert 4 * 256 * (2 + 16_384 + 16_384 * 8 + 2 * 2_304 + 2 * 256 * 8) == 159_909_888 < GRAPH_256


def test_ollama_graph_takes_num_batch():
    # fails with settings' "ubatch" back at a fixed 512 (529,006,592 B)
    b, rows = _rows()
    from llm_score import _plan
    _, res = _plan(rows[ROW])
    assert res["overhead"]["compute_buffer"] == GRAPH_256
    s = b.score(rows[ROW])
    assert s["required_full_gib"][0] == 3.38    # 1548.87 MiB + 1664 MiB + 252.25 MiB = 3.38 GiB (printed 3.4)
