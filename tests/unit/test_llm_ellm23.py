"""Task ellm23: LLM batches 36-37 after their first sight (regression rows), each change checked by hand against the
runtime's source, its printed figures or a config.json's arithmetic."""
import pytest

from gpu_garden.memory.llm import kv as llm
from support.pack import load_benchmark

GiB, MiB = 1 << 30, 1 << 20


def _nekolegends(version):
    # neko-legends Qwen3.6-27B NVFP4 on an RTX 5090: 200,000 tokens, fp8 cache, --max-num-seqs 1, prefix caching
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=200000, kv_dtype="fp8", weights_dtype="nvfp4",
                    vram=31.36 * GiB, gpu_memory_utilization=0.93, max_num_seqs=1, max_num_batched_tokens=8192,
                    gpu_name="NVIDIA GeForce RTX 5090", runtime_version=version)


def test_kv_cache_size_is_concurrency_times_len_from_0_22():
    # The log prints 'Available KV cache memory: 7.19 GiB', 'GPU KV cache size: 223,880 tokens', 'Maximum concurrency
    # for 200,000 tokens per request: 1.12x'. By hand: an fp8 page is 1568 tokens x 4 KV heads x 256 x 2 = 3,211,264 B
    # a layer ('Setting attention block size to 1568 tokens'), 16 layers a group; 7.19 GiB // (16 x 3,211,264) = 150
    # blocks; a request holds ceil(200000 / 1568) = 128 attention blocks + 3 DeltaNet groups x 2 state pages = 134;
    # 150 / 134 x 200000 = 223,880.6 -> 223,880 (vllm#40691's figure). The old figure, blocks // 4 groups x 1568,
    # would be 37 x 1568 = 58,016.
    from gpu_garden.memory.llm import cache as C
    s = llm.describe(model="Qwen/Qwen3.6-27B")
    got = C.vllm_pool(s, 7.19 * GiB, "fp8", 200000, hybrid=True, max_batched=8192, state_blocks=2,
                      tokens_from_concurrency=True)
    assert got["blocks"] == 150 and got["tokens"] == 223880
    old = C.vllm_pool(s, 7.19 * GiB, "fp8", 200000, hybrid=True, max_batched=8192, state_blocks=2)
    assert old["tokens"] == 37 * 1568
    # the version gate: 0.23.1rc1.dev301 (this log) and 0.22.0 (club-3090 pr334's 42,993, no whole block) print
    # concurrency x max_model_len; the nightly 0.20.1rc1.dev16 still printed blocks // groups x the smallest block
    for v, new in (("0.23.1rc1.dev301+g04c2a8dea", True), ("0.22.0", True), ("0.20.1rc1.dev16", False)):
        r = _nekolegends(v)
        assert r["kv_detail"]["pool_args"]["tokens_from_concurrency"] is new, v
        assert r["kv_capacity_tokens"] == (int(r["concurrency"] * 200000) if new else
                                           r["kv_capacity_tokens"] // 1568 * 1568), v


@pytest.mark.parametrize("v", ["0.23.1rc1.dev301+g04c2a8dea", "0.22.0"])
def test_would_print_matches_the_concurrency(v):
    r = _nekolegends(v)
    toks = int(r["concurrency"] * 200000)
    assert f"GPU KV cache size: {toks:,} tokens" in r["vllm_would_print"]


def _bench():
    return load_benchmark("bench_llm")


def _hilbertraum(kv_mib, notes):
    # HilbertRaum, llama.cpp b9849 Vulkan, Qwen3.5-9B UD-Q4_K_XL, -c 8192 -np 4 (kv_unified), f16 cache
    return {"id": "t", "url": "u", "runtime": "llama.cpp", "version": "b9849", "vram_gib": 6.74,
            "input": {"model": "Qwen/Qwen3.5-9B", "weights_dtype": "Q4_K_M", "ctx": 8192, "parallel": 4,
                      "kv_unified": True, "kv_dtype": "f16"},
            "measured": {"kv_mib": kv_mib}, "notes": notes}


def test_llamacpp_kv_buffer_line_excludes_the_recurrent_state():
    # 'Vulkan0 KV 256.00 MiB' = 8 full-attention layers x 8192 cells x 4 KV heads x 256 x 2 (K, V) x 2 bytes; the
    # DeltaNet state is printed apart ('RS buffer', 201.00 MiB for 4 cells), so the KV buffer line is compared with the
    # KV alone; a quoted breakdown context column (KV + state, 256 + 201 = 457) keeps the state
    b = _bench()
    assert 8 * 8192 * 4 * 256 * 2 * 2 == 256 * MiB
    got = b.score(_hilbertraum(256.0, ["buffers: Vulkan0 KV 256.00 MiB, recurrent state 201.00 MiB"]))
    assert got["kv"][0] == 256.0 and got["kv_exact"]
    got = b.score(_hilbertraum(457.0, ["Vulkan0 total 8273 = free 1 + self 6007 (model 5133 + context 457 + compute 416)"]))
    assert got["kv"][0] == 457.0 and got["kv_exact"]
    got = b.score(_hilbertraum(457.0, ["KV cache self-memory 457 MiB"]))
    assert got["kv"][0] == 457.0


def test_phi35_mini_from_its_config():
    # microsoft/Phi-3.5-mini-instruct config.json: 32 layers, hidden 3072, 32 heads and 32 KV heads (head 96),
    # intermediate 8192, vocab 32064, untied. By hand: 2 x 32064 x 3072 tables + 32 x (3072 x 9216 qkv + 3072 x 3072 o
    # + 3072 x 16384 gate_up + 8192 x 3072 down + 2 x 3072 norms) + 3072 = 3,821,079,552 (the card: 3.8B)
    s = llm.describe(model="microsoft/Phi-3.5-mini-instruct")
    assert s.name == "Phi-3.5-mini" and s.params == 3_821_079_552
    assert llm.describe(model="microsoft/Phi-3-mini-4k-instruct").name == "Phi-3-mini-4k"
    # llama.cpp b8030 on a Quadro P1000, -c 4096 -ctk q8_0 -ctv q8_0: context 816 MiB = 32 x 4096 x 32 x 96 x 2 x 34/32
    r = llm.plan(s, "llama.cpp", ctx=4096, kv_dtype="q8_0", weights_dtype="Q6_K_L", flash_attn="on",
                 runtime_version="b8030")
    assert r["kv_total"] == 32 * 4096 * 32 * 96 * 2 * 34 // 32 == 816 * MiB


def test_bartowski_q6_k_l_keeps_embed_and_output_in_q8_0():
    # "Q6_K_L | Uses Q8_0 for embed and output weights": the two 32064 x 3072 tables at 8.5 bits, not Q6_K's 6.5625
    from gpu_garden.memory.llm.weights import weights_by_role
    s = llm.describe(model="microsoft/Phi-3.5-mini-instruct")
    big, base = weights_by_role(s, "Q6_K_L"), weights_by_role(s, "Q6_K")
    assert big["embedding"] == big["output"] == 32064 * 3072 * 85 // 80
    assert big["blocks"] == base["blocks"]
    assert abs(big["total"] - base["total"] - 2 * 32064 * 3072 * (8.5 - 6.5625) / 8) <= 2


def test_ollama_qwen38_library():
    # luongnv89's DGX Spark run serves 'qwen3.8:27b' on Ollama 0.32.14 (17 GB, the library's Q4 default): the built-in
    # Qwen3.8-27B in Q4_K_M; a bare 'qwen3.8' names no size and is refused, as qwen3.5 / qwen3.6 are
    s = llm.describe(model="qwen3.8:27b")
    assert s.name == "Qwen3.8-27B" and s.quant == "Q4_K_M"
    with pytest.raises(llm.UserError):
        llm.describe(model="qwen3.8")


def test_partial_placement_row_compares_the_buffer_at_the_printed_layer_count():
    # AccessFlow, Ollama 0.34.0 (llama-server, its --fit choosing) qwen3:4b on a GTX 1650 with 3801 MiB free, f16
    # cache: 'offloaded 26/37 layers', CUDA0 model buffer 1745.66 MiB. As requested the plan puts all 37 on the GPU
    # (2385.55 MiB, +36.7 %); at the printed 26 (output first, llama-server's count: 304.3 MiB of Q6_K table
    # = 151936 x 2560 x 6.5625 / 8 + 25 blocks) the buffers compare like for like
    import json
    b = _bench()
    row = next(r for r in json.loads(b.DATA.read_text())["rows"]
               if r["id"] == "ollama-accessflow-qwen3-4b-1650-3801free-4k-f16kv-26of37")
    got = b.score(row)
    assert got["weights_gpu_mib"][1] == 1745.66
    assert abs(got["weights_gpu_mib"][0] / 1745.66 - 1) < 0.01
    # a row whose input sets -ngl, or whose runtime put every layer on the GPU, is compared as requested
    assert b._at_printed_layers(dict(row, input=dict(row["input"], ngl=26)), {"gpu_weights": 1}) == {"gpu_weights": 1}


def test_ollama_kv_cache_line_holds_the_state_checkpoints():
    # ueni, Ollama 0.18.2 (its own engine), Qwen3.6-35B-A3B at num_ctx 4096: 'kv cache Vulkan0 1.6 GiB'. By hand:
    # KV 10 layers x 4096 x 2 KV heads x 256 x 2 x 2 = 83,886,080 B; one slot's DeltaNet state 30 x (3 x 8192 x 4 +
    # 128 x 128 x 32 x 4) = 65,863,680 B, kept live and as 24 checkpoints (kvcache.Recurrent from v0.17.1-rc1), all
    # allocated by the cache: 83,886,080 + 25 x 65,863,680 = 1.61 GiB; without the checkpoints 0.14 GiB
    import json
    b = _bench()
    row = next(r for r in json.loads(b.DATA.read_text())["rows"]
               if r["id"] == "ollama-ueni-qwen36-35b-a3b-udiq1m-renoir-vulkan-4k-fit")
    got = b.score(row)
    want = (10 * 4096 * 2 * 256 * 2 * 2 + 25 * 30 * (3 * 8192 * 4 + 128 * 128 * 32 * 4)) / GiB
    assert got["kv"][0] == round(want, 3) and got["kv_exact"]
