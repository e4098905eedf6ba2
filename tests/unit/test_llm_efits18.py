"""Fits verdicts read in Ollama's source (task efits18). fs/ggml/ggml.go GraphSize sizes the graph of the llama runner's
placement (llm/memory.go before 0.12.11, llm/server.go llamaServer.Load from then) from the score matrix whether flash
attention is on or not: only its gptoss case reads useFlashAttention. Its case "llama" (dense) is taken as written;
server/sched.go's 'gpu memory' line (0.12.11 on) prints available = free - overhead - MinimumMemory. Expected values
are Ollama's printed figures (the thread named beside each) or arithmetic done by hand in the comment."""
import pytest

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def _codestral(vram_avail_gib, flash=True):
    s = llm.describe(model="codestral:22b")
    return llm.plan(s, "ollama", ctx=32768, parallel=1, vram=vram_avail_gib * GiB + 457 * MiB, runtime_version="0.22.1",
                    flash_attn=flash)


def test_ollama_llama_graph_is_graphsize_with_flash_attention_on():
    # Agentic_MalGen ollama-server.log (0.22.1, codestral:22b Q4_K_M at KvSize 32768, 'Flash Attention was auto, set to
    # enabled'): 'compute graph' 3.1 GiB. By hand, GraphSize case "llama" (E 6144, 48 heads, 8 KV x 128, vocab 32768,
    # batch 512): full = 4 x 512 x (1 + 4 x 6144 + 32768 x 49) = 3,338,668,032 B (3.109 GiB); partial = 4 x 512 x 6144
    # + 4 x 512 x (1 + 6144 + 32768) + 6144^2 x 9/16 + 4 x 32768 x (512 x 48 + 128 x 8) = 3,468,953,600 B
    r = _codestral(22.1)
    assert r["overhead"]["compute_buffer"] == 3_338_668_032
    assert abs(r["overhead"]["compute_buffer"] / GiB - 3.1) <= 0.05
    assert r["overhead"]["compute_buffer"] + r["partial_graph_extra"] == 3_468_953_600
    # flash attention does not enter the estimate: the same graph without it (llama.cpp's flash-attention compute
    # buffer, 0.08 GiB, was the figure before)
    assert _codestral(22.1, flash=False)["overhead"]["compute_buffer"] == r["overhead"]["compute_buffer"]


def test_ollama_places_codestral_partially_at_22g_and_fully_at_30g():
    # the same log: at 22.1 GiB available 'model requires more gpu memory than is currently available' with 54 of 57
    # layers; after an eviction, 29.9 GiB available, 57/57 (weights 12.3 + kv 7.0 + graph 3.1 = total 22.4 GiB)
    assert not _codestral(22.1)["fits_as_requested"]
    assert _codestral(29.9)["fits_as_requested"]


def test_ollama_llama31_70b_graph_at_8k():
    # ticket-llm (0.13.5, llama3.1:70b Q4_K_M at KvSize 8192, flash attention auto -> enabled): 'compute graph' 1.1 GiB,
    # total memory 42.6 GiB against 43.9 GiB available, and it loaded 81/81. By hand: partial = 4 x 512 x 8192 +
    # 4 x 512 x (1 + 8192 + 8192) + 8192^2 x 9/16 + 4 x 8192 x (512 x 64 + 128 x 8) = 1,195,378,688 B (1.113 GiB);
    # full = 4 x 512 x (1 + 32768 + 8192 x 65) = 1,157,629,952 B. The old graph_full + output tensor was 1.61 GiB
    s = llm.describe(model="llama3.1:70b")
    r = llm.plan(s, "ollama", ctx=8192, parallel=1, vram=43.9 * GiB + 457 * MiB, runtime_version="0.13.5",
                 flash_attn=True)
    assert r["overhead"]["compute_buffer"] == 1_157_629_952
    assert r["overhead"]["compute_buffer"] + r["partial_graph_extra"] == 1_195_378_688
    assert abs(1_195_378_688 / GiB - 1.1) <= 0.05
    assert r["fits_as_requested"]


def test_bench_reads_ollama_gpu_memory_available_as_free_less_the_minimum():
    # server/sched.go (0.12.11 on): 'gpu memory' available = free - OLLAMA_GPU_OVERHEAD - MinimumMemory (457 MiB on
    # CUDA); kv's --vram is the free memory, from which it takes the minimum itself. Malgen's qwen2.5-coder:32b at
    # 29.9 GiB available loaded 65/65 with 1.2 GiB to spare (total memory 28.7 GiB)
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    row = {"id": "t", "runtime": "ollama", "version": "0.22.1", "vram_gib": 29.9, "vram_reading": "ollama_available",
           "gpu": "NVIDIA A100-SXM4-40GB with another model loaded (Ollama: 29.9 GiB available of 40.0 GiB)",
           "input": {"model": "qwen2.5-coder:32b", "ctx": 32768, "parallel": 1, "flash_attn": "on"}}
    _, res = b._plan(row)
    assert res["vram"] == int(29.9 * GiB) + 457 * MiB
    assert res["fits_as_requested"]
    # the row's field decides, not its wording: the same text without the field is the free memory as read
    plain = {k: v for k, v in row.items() if k != "vram_reading"}
    assert b._plan(plain)[1]["vram"] == int(29.9 * GiB)
    # before 0.12.11 the offload line's memory.available is the free memory as read: the field there is a data error
    with pytest.raises(ValueError, match="0.12.11-0.29"):
        b._plan(dict(row, version="0.11.4"))


def test_ollama_qwen2_graph_is_the_score_matrix_with_flash_attention_on():
    # Agentic_MalGen ollama-server.log (0.22.1, qwen2.5-coder:32b Q4_K_M at KvSize 32768, 'Flash Attention was auto,
    # set to enabled'): 'compute graph' 2.6 GiB (the runner then allocated a 391 MiB flash-attention compute buffer):
    # the estimate's graph is sized as without flash attention (40 heads x 32768 x 512 x 4 B = 2.5 GiB of scores)
    s = llm.describe(model="qwen2.5-coder:32b")
    kw = dict(ctx=32768, parallel=1, vram=29.9 * GiB + 457 * MiB, runtime_version="0.22.1")
    on = llm.plan(s, "ollama", flash_attn=True, **kw)
    assert abs(on["overhead"]["compute_buffer"] / GiB - 2.6) <= 0.05
    off = llm.plan(s, "ollama", flash_attn=False, **kw)
    assert on["overhead"]["compute_buffer"] == off["overhead"]["compute_buffer"]


def test_ollama_on_metal_charges_the_full_graph_only():
    # ollama/ollama#8331 (0.5.4, llama3.3:70b-instruct-q5_K_M, num_ctx 2048 on an M4 Pro): 'offload to metal'
    # layers.model=81 layers.offload=81 with memory.available [48.0 GiB]. llm/memory.go: "on metal there's no partial
    # offload overhead" (graphPartialOffload = graphFullOffload). By hand, GraphSize case "llama" at 2048 cells: full =
    # max(4 x 512 x (1 + 4 x 8192 + 2048 x 65), 4 x 512 x (8192 + 128256)) = 339,740,672 B; the partial graph, 1.08 GiB,
    # is what a CUDA card is charged, and there only 80 layers fit
    s = llm.describe(model="llama3.3:70b-instruct-q5_K_M")
    kw = dict(ctx=2048, parallel=1, vram=48.0 * GiB, runtime_version="0.5.4")
    mac = llm.plan(s, "ollama", gpu_name="Apple M4 Pro Mac mini, Metal", **kw)
    assert mac["overhead"]["compute_buffer"] == 339_740_672 and not mac.get("partial_graph_extra")
    assert mac["fits_as_requested"]
    cuda = llm.plan(s, "ollama", **kw)
    assert cuda["partial_graph_extra"] > 0.7 * GiB and not cuda["fits_as_requested"]


def test_ollama_llama_server_takes_the_llama_cpp_build_it_vendors():
    # Ollama's LLAMA_CPP_VERSION: v0.30.0 b9452, v0.30.1 b9479, ..., v0.32.15 b10488. From b9453 (llamacpp.py
    # OUTPUTS_MAX) llama-server reserves one sequence's logits, not a whole ubatch's. accessflow's note (Ollama 0.34.0,
    # qwen3:4b, q8_0 cache, flash attention, GTX 1650): the fit step projected 2760 MiB for 37/37 layers = model
    # 2375.91 + KV 306.00 + a 78 MiB compute buffer. A whole ubatch's logits (151,936 x 512 x 4 B = 297 MiB) would be
    # 2993 MiB, 8% over
    from gpu_garden.memory.llm.runtimes import ollama as OL
    assert OL.llama_cpp_build((0, 30, 0)) == (9452,) and OL.llama_cpp_build((0, 30, 3)) == (9479,)
    assert OL.llama_cpp_build((0, 34, 0)) == (10488,) and OL.llama_cpp_build((0, 29, 9)) is None
    s = llm.describe(model="qwen3:4b")
    r = llm.plan(s, "ollama", ctx=4096, parallel=1, kv_dtype="q8_0", flash_attn=True, vram=3801 * MiB,
                 runtime_version="0.34.0")
    projected = (r["gpu_weights"] + r["kv_total"] + r["overhead"]["compute_buffer"]) / MiB
    assert abs(projected / 2760 - 1) <= 0.02
