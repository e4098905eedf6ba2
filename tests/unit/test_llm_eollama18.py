"""Ollama's reserves by version, read in ollama/ollama (task eollama18). From 0.12.11 to 0.29 the llama runner is
placed by llm/server.go llamaServer.Load: free memory less one blk.0 with its cache (the buffer), less MinimumMemory
(457 MiB on CUDA), OLLAMA_GPU_OVERHEAD and max(graph partial, graph full) on each GPU with layers. Those are held back,
not allocated: its log (ml/device.go BackendMemory.Log) prints 'total memory' = weights + cache + graph only. Expected
values are figures Ollama printed (the log named beside each) or arithmetic done by hand in the comment."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import ollama as OL

GiB, MiB = 1 << 30, 1 << 20


def _plan(model, ctx, version, avail_gib):
    s = llm.describe(model=model)
    return llm.plan(s, "ollama", ctx=ctx, parallel=1, vram=avail_gib * GiB + 457 * MiB, runtime_version=version)


def test_ollama_llama_runner_total_memory_leaves_out_the_reserve_and_the_buffer():
    # umbc-research/Ticket-LLM ollama_server.log (0.13.5, llama3.1:8b Q4_K_M at KvSize 90000, one L40S, 43.9 GiB
    # available): model weights 4.3 GiB, kv cache 11.0 GiB, compute graph 5.7 GiB, 'total memory' 21.0 GiB, 33/33 layers.
    # The placement needs 457 MiB and one layer (blk.0 + its cache) more than that: kv's total on the GPU
    r = _plan("llama3.1:8b", 90000, "0.13.5", 43.9)
    assert r["fits_as_requested"]
    assert abs(r["ollama_total_memory"] / GiB - 21.0) <= 0.05
    assert "ollama_required_full" not in r          # that log prints no memory.required.full: one key, one figure
    held = r["overhead"]["cuda_context"] + r["overhead"]["layer_buffer"]
    assert r["total"] - r["ollama_total_memory"] == held
    assert held > 457 * MiB + 300 * MiB   # blk.0 of 8B Q4_K_M (~0.13 GiB) + its 90000-cell cache (0.34 GiB)


def test_ollama_total_memory_takes_the_partial_graph_when_a_layer_stays_off():
    # llamaServer.Load: graphSize = graphFullOffload, graphPartialOffload when gpuLayers.Sum() < totalLayers; the
    # weights and cache of the layers left on the CPU are printed too (CPU device lines), so the total moves by the
    # graph alone. codestral:22b at 32768 on 0.22.1 (Agentic_MalGen log): full graph 3,338,668,032 B, partial
    # 3,468,953,600 B (test_llm_efits18); all layers at 29.9 GiB available, 53 of 56 blocks at 22.1 GiB
    full, part = _plan("codestral:22b", 32768, "0.22.1", 29.9), _plan("codestral:22b", 32768, "0.22.1", 22.1)
    assert full["fits_as_requested"] and not part["fits_as_requested"]
    assert abs(full["ollama_total_memory"] / GiB - 22.4) <= 0.1       # printed 22.4 (weights 12.3 + 7.0 + 3.1)
    assert part["ollama_total_memory"] - full["ollama_total_memory"] == 3_468_953_600 - 3_338_668_032


def test_ollama_required_full_before_0_12_11_still_holds_the_reserve_and_buffer():
    # up to 0.12.10 the llama runner is placed by llm/memory.go EstimateGPULayers, whose memory.required.full adds
    # MinimumMemory and the buffer layer to every GPU (no printed figure here: the difference is the structure)
    new, old = _plan("llama3.1:8b", 90000, "0.13.5", 43.9), _plan("llama3.1:8b", 90000, "0.12.10", 43.9)
    assert "ollama_total_memory" not in old and "ollama_required_full" not in new
    assert old["ollama_required_full"] - new["ollama_total_memory"] == (
        old["overhead"]["cuda_context"] + old["overhead"]["layer_buffer"])
    assert not OL.layout_total_line((0, 12, 10), llm.describe(model="llama3.1:8b"))
    assert OL.layout_total_line((0, 12, 11), llm.describe(model="llama3.1:8b"))
    # from 0.30 Ollama runs llama-server (llama.cpp's own figures), not this layout
    assert not OL.layout_total_line((0, 30, 0), llm.describe(model="llama3.1:8b"))


def test_bench_scores_the_total_memory_line_as_required_full():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    row = {"id": "t", "runtime": "ollama", "version": "0.13.5", "vram_gib": 43.9, "url": "u",
           "gpu": "NVIDIA L40S 48 GB (Ollama: total 45.0 GiB, 43.9 GiB available)",
           "input": {"model": "llama3.1:8b", "ctx": 90000, "parallel": 1},
           "measured": {"total_memory_gib": 21.0, "fit": True}}
    sc = b.score(row)
    assert sc["required_full_gib"][1] == 21.0
    assert abs(sc["required_full_err"]) < 0.005
    # over two GPUs the layout (fewest GPUs first) is not modelled: not scored
    two = dict(row, input=dict(row["input"], num_gpus=2))
    assert "required_full_gib" not in b.score(two)


def test_report_prints_the_log_total_only_where_the_log_has_that_line():
    from gpu_garden.memory.llm import report
    r = _plan("codestral:22b", 32768, "0.22.1", 29.9)
    line = next(x for x in report.format_plan(r).splitlines() if "'total memory'" in x)
    assert "Ollama's log line" in line and "in place of memory.required.full" in line
    # 0.12.10's llama runner prints memory.required.full (with the reserve and the buffer): no such line
    old = _plan("codestral:22b", 32768, "0.12.10", 29.9)
    assert "ollama_total_memory" not in old
    assert "'total memory'" not in report.format_plan(old)


def test_tinyllama_and_deepseek_coder_13b_are_built_in_from_their_config_json():
    # batch 43's two unknown models. TinyLlama-1.1B-Chat-v1.0: llama.cpp b8121 prints KV 44.00 MiB for 2048 cells
    # (22 layers x 4 KV heads x 64 x 2 (K, V) x 2 bytes x 2048 = 44 MiB by hand); deepseek-coder-1.3b-instruct: b7585
    # prints 3072.00 MiB for 16384 cells (24 x 16 x 128 x 2 x 2 x 16384 = 3072 MiB)
    tiny = llm.describe(model="TinyLlama/TinyLlama-1.1B-Chat-v1.0")
    assert (tiny.n_layers, tiny.n_kv_heads, tiny.head_dim_k) == (22, 4, 64)
    r = llm.plan(tiny, "llama.cpp", ctx=2048, parallel=4, kv_dtype="f16")
    assert r["kv_total"] == 44 * MiB
    ds = llm.describe(model="deepseek-ai/deepseek-coder-1.3b-instruct")
    r = llm.plan(ds, "llama.cpp", ctx=16384, parallel=4, kv_dtype="f16")
    assert r["kv_total"] == 3072 * MiB
    # its fields give the parameter count a LoRA run printed for this base: 1,347,258,368 less 786,432 trainable
    E, F, L, V = ds.hidden, 5504, ds.n_layers, ds.vocab
    assert 2 * V * E + L * (4 * E * E + 3 * E * F + 2 * E) + E == 1_347_258_368 - 786_432
    assert ds.max_ctx == 16384 and not ds.tied


def test_ollama_chatglm_graph_is_graphsize_case_chatglm():
    # yyc3-ai-family iMac-M4 notes (Ollama 0.17.0, codegeex4 Q4_0 at 32768 on an M4, chatglm arch): compute graph 2.1
    # GiB, total memory 8.1 GiB (weights 4.7 + kv 1.2 + graph 2.1). By hand, GraphSize case "chatglm" with its qkv
    # bias branch (E 4096, 32 heads x 128, 2 KV heads, vocab 151552, batch 512, bias (32 + 4) x 128 = 4608):
    # full = 4 x 512 x (2 + 8192 + 32768 + 32768 x 32 + 4096 + 4608) = 2,249,199,616 B; heads / KV heads x cache / 6
    # (the fallback for an architecture GraphSize does not name) was 16 x 1.25 GiB / 6 = 3.33 GiB
    s = llm.describe(model="THUDM/codegeex4-all-9b")
    r = llm.plan(s, "ollama", ctx=32768, parallel=1, weights_dtype="Q4_0", vram=24.96 * GiB,
                 runtime_version="0.17.0", gpu_name="Apple M4")
    assert r["overhead"]["compute_buffer"] == 2_249_199_616
    assert abs(r["ollama_total_memory"] / GiB - 8.1) <= 0.05
    assert OL.gguf_arch(s) == "chatglm"


def test_ollama_keeps_an_f16_cache_for_a_quantized_type_without_flash_attention():
    # llm/server.go NewLlamaServer (v0.6.0, v0.13.3: kvct applied only under `if fa`, else "quantized kv cache requested
    # but flash attention disabled"; v0.22.1 llama runner: a quantized kvct needs flashAttention == Enabled, i.e.
    # OLLAMA_FLASH_ATTENTION set, else "OLLAMA_FLASH_ATTENTION must be enabled ..." and KvCacheType ""). qwen2.5:14b at
    # 6144: f16 = 48 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes x 6144 = 1152 MiB; the estimate's q8_0 half that
    s = llm.describe(model="qwen2.5:14b")
    auto = llm.plan(s, "ollama", ctx=6144, parallel=1, kv_dtype="q8_0", runtime_version="0.17.7")
    assert auto["kv_dtype"] == "f16" and auto["kv_total"] == 1152 * MiB
    assert any("OLLAMA_FLASH_ATTENTION" in n for n in auto["notes"])
    on = llm.plan(s, "ollama", ctx=6144, parallel=1, kv_dtype="q8_0", runtime_version="0.17.7", flash_attn=True)
    assert on["kv_dtype"] == "q8_0" and on["kv_total"] == 576 * MiB
    # an architecture Ollama's own engine runs with flash attention by default (qwen3 from 0.12.4) keeps q8_0
    q3 = llm.plan(llm.describe(model="qwen3:8b"), "ollama", ctx=6144, parallel=1, kv_dtype="q8_0",
                  runtime_version="0.17.7")
    assert q3["kv_dtype"] == "q8_0"
    # 0.30 and later hand the type to llama-server: not this rule
    new = llm.plan(s, "ollama", ctx=6144, parallel=1, kv_dtype="q8_0", runtime_version="0.30.0")
    assert new["kv_dtype"] == "q8_0"


def test_ollama_runner_resolves_automatic_flash_attention_from_0_13_4():
    # Ticket-LLM ollama_server.log (0.13.5, llama3.1:8b at KvSize 90000, OLLAMA_FLASH_ATTENTION unset: load request
    # FlashAttention:Auto, 'Flash Attention was auto, set to enabled'): 'llama_kv_cache: size = 11264.00 MiB' = 90112
    # cells (padded to 256 with flash attention) x 32 layers x 8 KV heads x 128 x 2 x 2 bytes. Without flash attention
    # llama.cpp pads to 32: 90016 cells, 11252 MiB
    s = llm.describe(model="llama3.1:8b")
    kw = dict(ctx=90000, parallel=1)
    assert llm.plan(s, "ollama", runtime_version="0.13.5", **kw)["ollama_kv_allocated"] == 11264 * MiB
    # before bd6c1d6b4 (v0.13.4-rc0) an unset variable meant no flash attention for the llama runner
    assert llm.plan(s, "ollama", runtime_version="0.13.3", **kw)["ollama_kv_allocated"] == 11252 * MiB
    # a card llama.cpp runs no flash attention on (a Kepler Tesla K80) keeps the unpadded cache
    assert llm.plan(s, "ollama", runtime_version="0.13.5", gpu_name="Tesla K80", **kw)["ollama_kv_allocated"] == 11252 * MiB
    assert llm.plan(s, "ollama", runtime_version="0.13.5", flash_attn=False, **kw)["ollama_kv_allocated"] == 11252 * MiB
