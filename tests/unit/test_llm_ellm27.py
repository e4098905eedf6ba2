"""Task ellm27: LLM batch 40 after its first sight (regression rows) and the regression set's worst rows, each change
checked by hand against the runtime's source, its printed figures or a config.json's arithmetic."""
from support.pack import load_benchmark

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20

# Gemma 4 E4B (config.json text_config): vocab 262144, hidden 2560, 42 layers, hidden_size_per_layer_input 256, tied.
# The per-layer table 262144 x (42 x 256), per_layer_model_projection 2560 x (42 x 256), its norm 256
E4B_PLE = 262144 * 42 * 256 + 2560 * 42 * 256 + 256  # 2,846,097,664 parameters
E4B_TOKENS = 262144 * 2560


def test_gemma4_per_layer_table_takes_the_token_embedding_type_in_a_llamacpp_gguf():
    # llama-quantize gives per_layer_token_embd.weight the token embedding's type (llama-quant.cpp
    # llama_tensor_get_type: name == "token_embd.weight" || name == "per_layer_token_embd.weight"); only Ollama's
    # quantizer asks for f16 (server/quantization.go). unsloth's E4B Q8_0 (acdtrx llama-runner log, b8680): q8_0 296,
    # bf16 1, f32 423 tensors, 7.62 GiB: an F16 table alone would be 5.30 GiB of it. Q8_0 is 34 bytes a 32
    r = llm.plan(llm.describe(model="google/gemma-4-E4B-it"), "llama.cpp", ctx=4096, weights_dtype="Q8_0",
                 runtime_version="b8680")
    table = E4B_PLE * 34 // 32  # 3,023,978,768 B
    assert r["weights_by_role"]["embedding"] == E4B_TOKENS * 34 // 32 + table == 3_737_010_448
    # Q4_K_M: the token embedding Q4_K (144 bytes a 256), so the table too
    q4 = llm.plan(llm.describe(model="google/gemma-4-E4B-it"), "llama.cpp", ctx=4096, weights_dtype="Q4_K_M",
                  runtime_version="b8680")
    assert q4["weights_by_role"]["embedding"] - E4B_TOKENS * 210 // 256 == E4B_PLE * 144 // 256 == 1_600_929_936


def test_gemma4_per_layer_table_stays_f16_in_an_ollama_blob():
    # an Ollama library tag keeps the F16 table (ollama#15749: 6.6 GiB on the CPU), on Ollama and on llama.cpp alike
    s = llm.describe(model="gemma4:e4b")
    for rt, v in (("ollama", "0.21.0"), ("llama.cpp", "b8766")):
        r = llm.plan(s, rt, ctx=4096, runtime_version=v)
        roles = r["weights_by_role"]
        assert roles["embedding"] + roles["output"] >= E4B_PLE * 2 == 5_692_195_328


# TkskKurumi/llama-server-benchmarks DeepSeekV3.1-Terminus-TQ1 memory-np=1.log (b7522, 4x RTX 3080 20 GB):
# llama_memory_breakdown_print's context columns 76 + 57 + 57 + 392 = 582 MiB, each std::to_string(bytes / MiB), so
# each device may hold up to 1 MiB more than it prints: the true sum lies in [582, 586)
TKSK = ["kv_mib = the four 'context' columns (76 + 57 + 57 + 392), MLA cache"]


def test_sum_of_truncated_breakdown_columns_allows_one_mib_per_column():
    b = load_benchmark("bench_llm")
    row = {"runtime": "llama.cpp", "measured": {"kv_mib": 582.0}, "notes": TKSK}
    assert b.kv_exact(row, "kv_mib", 583.312, "MiB")  # the plan's MLA cache over the four devices
    assert b.kv_exact(row, "kv_mib", 585.99, "MiB")
    assert not b.kv_exact(row, "kv_mib", 586.0, "MiB")
    assert not b.kv_exact(row, "kv_mib", 581.99, "MiB")
    # columns that do not add up to the printed figure are another print: half a unit of MiB, as before
    other = dict(row, notes=["kv_mib = the four 'context' columns (76 + 57 + 57 + 391)"])
    assert not b.kv_exact(other, "kv_mib", 583.312, "MiB") and b.kv_exact(other, "kv_mib", 582.0, "MiB")


# Gemma-4-26B-A4B (config.json text_config): 5 global layers of 2 KV heads x 512, K and V, and 25 sliding layers of
# 8 KV heads x 256 with a 1024-token window; bf16 cache, vLLM blocks of 16. A request of 262144 tokens holds every token
# of the global layers and, in each sliding layer, cdiv(window - 1 + max_num_batched_tokens, 16) + 1 blocks
# (SlidingWindowSpec.max_memory_usage_bytes)
GLOBAL_REQUEST = 262144 * 5 * 2 * 2 * 512 * 2  # 5,368,709,120 B
SLIDING_BLOCK = 16 * 25 * 2 * 8 * 256 * 2      # 3,276,800 B


def _gb10(name="NVIDIA GB10", version="0.25.1", **kw):
    s = llm.describe(model="google/gemma-4-26B-A4B-it")
    return llm.plan(s, runtime="vllm", ctx=262144, weights_dtype="nvfp4", vram=121.63 * GiB, gpu_memory_utilization=0.85,
                    max_num_seqs=32, gpu_name=name, runtime_version=version, **kw)


def test_gb10_takes_the_small_batch_default_and_gemma4_raises_it_to_one_video():
    # sostrowsk/dgx-spark-local-llm gemma4-nvfp4.log (0.25.1, GB10 121.63 GiB): "Raising max_num_batched_tokens from
    # 2048 to 2496 to accommodate 'video' input"; NVML has no memory figure on the GB10, so get_batch_defaults takes
    # the small defaults; 2496 = 32 frames x (70 + 2 + 6). (1023 + 2496) / 16 -> 220 blocks + 1
    r = _gb10()
    assert r["kv_detail"]["pool_args"]["max_batched"] == 2496
    assert r["kv_request_bytes"] == GLOBAL_REQUEST + 221 * SLIDING_BLOCK == 6_092_881_920
    # before 0.25.1 the floor is not read: the small default alone, (1023 + 2048) / 16 -> 192 + 1 blocks
    assert _gb10(version="0.24.0")["kv_request_bytes"] == GLOBAL_REQUEST + 193 * SLIDING_BLOCK
    # an H100 of 80 GiB keeps the large default, 8192: (1023 + 8192) / 16 -> 576 + 1 blocks
    assert _gb10(name="NVIDIA H100 80GB HBM3")["kv_request_bytes"] == GLOBAL_REQUEST + 577 * SLIDING_BLOCK
    # a value given is kept
    assert _gb10(max_num_batched_tokens=4096)["kv_detail"]["pool_args"]["max_batched"] == 4096
    # the printed pool: 84.68 GiB over 6,092,881,920 B a request is 14.92 requests of 262,144 tokens, as printed
    assert round(84.68 * GiB / 6_092_881_920, 2) == 14.92


def test_fused_qkv_takes_q5k_in_a_q4km_gguf():
    # llama-quant.cpp llama_tensor_get_type: attn_qkv.weight is Q5_K in a Q4_K_M file (Q6_K in Q5_K_M); the block rate
    # of the file type (Llama 3's separate q/k/v) stood for it before. Phi-4 (config.json): 40 layers, hidden 5120, 40
    # heads and 10 KV heads of 128: attn_qkv 5120 x (5120 + 2 x 1280) = 5120 x 7680 a layer
    from dataclasses import replace

    from gpu_garden.memory.llm import weights as W
    phi4 = llm.describe(model="microsoft/phi-4")
    qkv = 40 * 5120 * 7680  # 1,572,864,000
    plain = W.weights_by_role(replace(phi4, arch="llama"), "Q4_K_M")["total"]
    fused = W.weights_by_role(phi4, "Q4_K_M")["total"]
    assert abs(fused - plain - qkv * (5.5 - W.BLOCK_BITS["Q4_K_M"]) / 8) <= 2
    # ggml-org/llama.cpp#13552's phi-4 Q4_K_M: 'model size 8.43 GiB' (within its two decimals and 0.3 %)
    assert abs(fused / GiB - 8.43) < 0.03
    # Qwen3.5-9B: 24 DeltaNet layers of 32 (every 4th is full attention), hidden 4096, 16 key heads x 128 twice and 32
    # value heads x 128: attn_qkv 4096 x 8192 in each DeltaNet layer only
    q35 = llm.describe(model="Qwen/Qwen3.5-9B")
    assert W.fused_qkv_params(q35) == 24 * 4096 * 8192 == 805_306_368
    assert W.fused_qkv_params(llm.describe(model="Qwen/Qwen3-8B")) == 0
    # Q8_0 has no such rule
    assert W.weights_by_role(phi4, "Q8_0")["total"] == W.weights_by_role(replace(phi4, arch="llama"), "Q8_0")["total"]


def test_breakdown_self_column_quoted_in_prose_truncates():
    # jaylfc/taOS#144: 'f16/f16: 10054 MiB = 5406 model + 4146 self + 501 compute buffers' is a memory breakdown host
    # row (its columns add to 10053: each truncated); Qwen3.5-9B at 131072 cells: 8 full layers x 131072 x 2 x 4 heads
    # x 256 x 2 B = 4096 MiB + 24 DeltaNet states of 2,195,456 B = 50.25 MiB -> 4146.25, printed 4146
    b = load_benchmark("bench_llm")
    row = {"runtime": "llama.cpp", "measured": {"kv_mib": 4146.0},
           "notes": ["'f16/f16: 10054 MiB = 5406 model + 4146 self + 501 compute buffers' at 131K"]}
    assert b.kv_exact(row, "kv_mib", 4096 + 24 * 2_195_456 / MiB, "MiB")
    assert not b.kv_exact(row, "kv_mib", 4147.0, "MiB")
    table = dict(row, measured={"kv_mib": 1074.0}, notes=["same table: f16/f16 at 32K, 1074 MiB of KV self-memory"])
    assert b.kv_exact(table, "kv_mib", 1024 + 24 * 2_195_456 / MiB, "MiB")
    # another figure's self column is not this one: half a unit, as before
    other = dict(row, notes=["10054 MiB = 5406 model + 4145 self + 501 compute"])
    assert not b.kv_exact(other, "kv_mib", 4146.25, "MiB")
