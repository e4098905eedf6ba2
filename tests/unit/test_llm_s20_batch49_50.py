"""Task ellm20 (session 20): LLM batches 49 and 50 after their first sight (regression rows); each change checked by
hand against a runtime's printed figures, its source or a published config.json."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.ollama_tags import ollama_tag

GiB, MiB = 1 << 30, 1 << 20


def test_ollama_llama32_1b_default_build_is_q8_0_and_3b_stays_q4_k_m():
    # `ollama pull llama3.2:1b` fetches blob 74701a8c35f6 of 1,321,082,688 bytes, /api/tags lists it as Q8_0 (1.3 GB);
    # llama3.2:3b is the library's Q4_K_M default (2.0 GB); a tag naming its quantization keeps it
    assert ollama_tag("llama3.2:1b")[:2] == ("Llama-3.2-1B", "Q8_0")
    assert ollama_tag("llama3.2:3b")[:2] == ("Llama-3.2-3B", "Q4_K_M")
    assert ollama_tag("llama3.2")[:2] == ("Llama-3.2-3B", "Q4_K_M")
    assert ollama_tag("llama3.2:1b-instruct-q4_K_M")[:2] == ("Llama-3.2-1B", "Q4_K_M")


def test_llama_server_cpu_model_buffers_hold_the_tied_token_table_twice():
    # sovereign-manifold ollama_server.log (Ollama 0.31.1, llama-server on an Android CPU, llama3.2:1b):
    # 'CPU model buffer size = 266.41 MiB' (token_embd for the lookup) + 'CPU_REPACK model buffer size = 1252.16 MiB'
    # (the blocks and the output, a second copy of the tied table) = 1518.57 MiB; the file is 1,321,082,688 bytes
    r = llm.plan(llm.describe(model="llama3.2:1b"), "ollama", ctx=4096, runtime_version="0.31.1")
    assert abs(r["weights"] / 1321082688 - 1) < 0.01  # the file (its metadata aside)
    assert abs((r["host_weights"] + r["gpu_weights"]) / MiB - 1518.57) < 5  # the two buffers
    assert abs(r["host_weights"] / MiB - 266.41) < 1  # the CPU buffer: the token table alone
    assert r["kv_total"] == 128 * MiB  # 'llama_kv_cache: size = 128.00 MiB (4096 cells, 16 layers, 1/1 seqs)'


def test_bench_scores_an_ollama_llama_server_buffer_sum_as_llama_cpp_does():
    # an Ollama >= 0.30 row whose weights_mib its notes give as the sum of llama-server's model buffers is compared with
    # the plan's device + host buffers (the tied table twice), not Ollama's own memory.weights.total (blocks + output)
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    row = {"id": "t", "runtime": "ollama", "version": "0.31.1", "url": "u", "vram_gib": None,
           "input": {"model": "llama3.2:1b", "ctx": 4096, "parallel": 1},
           "measured": {"weights_mib": 1518.57},
           "notes": ["'CPU model buffer size = 266.41 MiB' + 'CPU_REPACK model buffer size = 1252.16 MiB' "
                     "(weights_mib is their sum)"]}
    assert abs(b.score(row)["weights_err"]) < 0.005
    # before llama-server (0.29) a model its own engine does not run (llama) loads in the llama runner, llama.cpp's
    # loader with the same buffers: scored the same way (round 56, batch 62's 0.12.6 Metal rows); without the notes
    # saying the figure is a buffer sum it is Ollama's weights total (blocks + output), the token table under it
    old = dict(row, version="0.29.0")
    assert abs(b.score(old)["weights_err"]) < 0.005
    assert b.score(dict(old, notes=[]))["weights_err"] < -0.15


def test_qwen2_72b_is_read_as_qwen25_72b_geometry():
    # Qwen/Qwen2-72B-Instruct config.json (as a model-config table transcribes it): 80 layers, 64 heads, 8 KV heads,
    # hidden 8192, intermediate 29568, vocab 152064 -- Qwen2.5-72B's fields
    s = llm.describe(model="Qwen/Qwen2-72B-Instruct")
    assert s.name == "Qwen2.5-72B" and s.n_layers == 80 and s.n_kv_heads == 8 and s.head_dim_k == 128
    assert s.hidden == 8192 and s.vocab == 152064 and s.intermediate == 29568
    assert llm.describe(model="Qwen/Qwen2-72B").name == "Qwen2.5-72B"
    # bf16 over TP 2: 72.7 B x 2 bytes / 2 = 67.7 GiB a rank; 80 x 2 x 4 KV heads (a rank's) x 128 x 2 = 160 KiB a token
    r = llm.plan(s, "vllm", ctx=13312, tensor_parallel_size=2, vram=79.25 * GiB, runtime_version="0.5.5")
    assert abs(r["weights"] / GiB - 67.7) < 0.1
    assert r["kv_per_token"] == 80 * 2 * 4 * 128 * 2
    # other Qwen2 72B models are other names
    for other in ("Qwen/Qwen2-VL-72B-Instruct", "Qwen/Qwen2-Math-72B-Instruct"):
        try:
            name = llm.describe(model=other).name
        except Exception:  # noqa: BLE001 - unknown is the expected answer
            continue
        assert name != "Qwen2.5-72B", other


def test_ollama_devstral_small_2_is_the_built_in_devstral_small_2_in_q4_k_m():
    # SeanceTable/auto-iteration ollama.log (Ollama 0.21.0, devstral-small-2:24b): architecture=mistral3
    # file_type=Q4_K_M, 41 layers with the output, 'kv cache' 5.0 GiB at 32768 cells, 'model weights' 13.8 GiB + 360 MiB
    assert ollama_tag("devstral-small-2:24b")[:2] == ("Devstral-Small-2-24B", "Q4_K_M")
    assert ollama_tag("devstral-small-2")[:2] == ("Devstral-Small-2-24B", "Q4_K_M")
    r = llm.plan(llm.describe(model="devstral-small-2:24b"), "ollama", ctx=32768, runtime_version="0.21.0")
    assert r["kv_total"] == 40 * 2 * 8 * 128 * 2 * 32768 == 5 * GiB
    assert abs(r["weights_by_role"]["embedding"] / MiB - 360.0) < 1  # 131072 x 5120 in Q4_K: the CPU part


def test_ollama_phi4_reasoning_is_phi4_geometry_with_its_32k_context():
    # Small-ed1/ContextHarbor ollama.log (Ollama 0.13.5): general.name 'Phi 4 Reasoning', Q4_K - Medium, n_ctx_train
    # 32768, 40 layers, 10 KV heads x 128; 'CPU KV buffer size = 1600.00 MiB' at 8192 cells
    assert ollama_tag("phi4-reasoning:14b")[:2] == ("Phi-4", "Q4_K_M_QKV16")  # Q4_K_M, attn_qkv F16 (below)
    s = llm.describe(model="phi4-reasoning:14b")
    assert s.n_layers == 40 and s.n_kv_heads == 10 and s.max_ctx == 32768
    assert llm.describe(model="microsoft/Phi-4-reasoning").max_ctx == 32768
    assert llm.describe(model="microsoft/phi-4").max_ctx == 16384  # the base model keeps its own
    r = llm.plan(s, "ollama", ctx=8192, runtime_version="0.13.5")
    assert r["kv_total"] == 1600 * MiB


def test_qwen3_vl_30b_a3b_tower_is_loaded_with_vllm_weights():
    # Zzsf11/VideoCuttingAgent vllm_serve.log (vLLM 0.12.0, TP 2 on H100s, bf16): 'Model loading took 29.3115 GiB' a
    # rank; the decoder's half alone is 28.50 GiB (-2.8 %), the 27-block ViT of 1152 (1.00 GiB in bf16) split over the
    # two ranks brings it to 29.00 (-1.1 %)
    s = llm.describe(model="Qwen/Qwen3-VL-30B-A3B-Instruct")
    assert s.vision and s.vision["depth"] == 27 and s.vision["hidden_size"] == 1152
    assert s.vision["out_hidden_size"] == 2048  # the decoder's width (Qwen3-VL-32B's tower gives 5120)
    r = llm.plan(s, "vllm", ctx=65536, tensor_parallel_size=2, vram=79.18 * GiB, runtime_version="0.12.0",
                 max_num_seqs=256, gpu_name="NVIDIA H100 80GB HBM3")
    assert abs(r["weights"] / GiB / 29.3115 - 1) < 0.015


def test_ollama_2025_quantizer_kept_a_fused_attn_qkv_in_f16():
    # Small-ed1/ContextHarbor ollama.log (Ollama 0.13.5, phi4-reasoning:14b): 'type f16: 40 tensors', 'type q4_K: 101',
    # 'type q6_K: 21', 'file size = 10.35 GiB', 'CPU model buffer size = 10599.08 MiB': one F16 tensor a layer, the
    # fused attn_qkv (5120 x 7680) Ollama's quantizer of 2025 skipped as if it were a vision tensor ("v." in its name)
    built, quant, note = ollama_tag("phi4-reasoning:14b")
    assert (built, quant) == ("Phi-4", "Q4_K_M_QKV16") and "F16" in note
    r = llm.plan(llm.describe(model="phi4-reasoning:14b"), "ollama", ctx=8192, runtime_version="0.13.5")
    assert abs(r["weights"] / MiB / 10599.08 - 1) < 0.005
    # the same file type from llama-quantize (attn_qkv in Q5_K): about 1.9 GiB less
    std = llm.plan(llm.describe(model="microsoft/Phi-4-reasoning"), "llama.cpp", ctx=8192, weights_dtype="Q4_K_M")
    assert 1.8 < (r["weights"] - std["weights"]) / GiB < 2.0
    assert ollama_tag("phi4-reasoning:14b-fp16")[1] == "F16"  # nothing quantized: nothing kept back
