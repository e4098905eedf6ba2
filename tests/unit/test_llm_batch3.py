"""`gpu-garden kv` against the third batch of runtime logs (benchmarks/data/llm_measured.json, batch 3). Expected
values are the numbers the runtimes printed, typed by hand from the threads named in each test; none is computed by
the code under test. Removing Ollama's buffer layer, its version-dependent weights total, its pre-0.6.3 full-layer
KV estimate, or the Q4_0 library defaults breaks one of these."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import ollama_tags
from gpu_garden.memory.units import GiB, MiB


def spec(name):
    return llm.describe(model=name)


# ---------------------------------------------------------------- Ollama

def test_ollama_holds_one_layer_back_as_a_buffer():
    # ollama/ollama#11896 (Ollama 0.11.4, RTX 2080 Ti): a Qwen2.5-14B Q4_K_M with memory.required.kv="534.0 MiB"
    # (2848 tokens) on memory.available="[9.9 GiB]": layers.model=49 layers.offload=48,
    # memory.required.full="10.0 GiB" memory.graph.partial="913.7 MiB". Without the buffer layer it "fits".
    r = llm.plan(spec("qwen2.5:14b-instruct-q4_K_M"), "ollama", ctx=2848, vram=9.9 * GiB, runtime_version="0.11.4")
    assert r["fits_as_requested"] is False
    # the held-back layer is blk.0 with its KV share: 1/48 of the blocks and of the 534.0 MiB cache
    assert r["overhead"]["layer_buffer"] > 534 * MiB / 48


def test_ollama_still_fits_what_ollama_fitted_with_the_buffer():
    # ollama/ollama#8588 (0.5.7): qwen2.5:14b at 2048 on memory.available="[10.0 GiB]": layers.offload=49 of 49.
    r = llm.plan(spec("qwen2.5:14b"), "ollama", ctx=2048, vram=10.0 * GiB, runtime_version="0.5.7")
    assert r["fits_as_requested"] is True


def test_ollama_weights_total_as_each_version_prints_it():
    # < 0.6: memory.weights.total = the blocks with their KV share, no output tensor.
    #   ollama/ollama#8922 (0.5.7): llama3.1:70b, --ctx-size 8192 --parallel 4, memory.weights.total="40.7 GiB",
    #   memory.required.kv "2.5 GiB"; ollama/ollama#8588 (0.5.7): qwen2.5:14b at 2048, memory.weights.total="7.7 GiB"
    big = llm.plan(spec("llama3.1:70b"), "ollama", ctx=2048, parallel=4, runtime_version="0.5.7")
    assert abs(big["ollama_weights_total"] / GiB / 40.7 - 1) < 0.01
    mid = llm.plan(spec("qwen2.5:14b"), "ollama", ctx=2048, runtime_version="0.5.7")
    assert abs(mid["ollama_weights_total"] / GiB / 7.7 - 1) < 0.015
    # 0.6.x: the blocks alone. ollama/ollama#9791 (0.6.2): gemma3:27b memory.weights.total="14.3 GiB",
    #   memory.weights.repeating="14.3 GiB", memory.weights.nonrepeating="1.1 GiB"
    g = llm.plan(spec("gemma3:27b"), "ollama", ctx=2048, runtime_version="0.6.2")
    assert abs(g["ollama_weights_total"] / GiB / 14.3 - 1) < 0.01
    # newer: blocks + output. ollama/ollama#12000 (0.11.6): gemma3:12b memory.weights.total="6.8 GiB"
    n = llm.plan(spec("gemma3:12b"), "ollama", ctx=8192, runtime_version="0.11.6")
    assert abs(n["ollama_weights_total"] / GiB / 6.8 - 1) < 0.01


def test_ollama_062_sizes_gemma3_sliding_layers_in_full():
    # ollama/ollama#9791 (0.6.2): gemma3:27b at the default num_ctx 2048, memory.required.kv="992.0 MiB" (62 layers
    # x 2048 tokens x 16 KV heads x 128 x 2 x 2 bytes); sliding-window estimates came with ollama/ollama#9987 (0.6.3).
    old = llm.plan(spec("gemma3:27b"), "ollama", ctx=2048, runtime_version="0.6.2")
    assert old["kv_total"] == 992 * MiB
    # ollama/ollama#10341 (0.6.5): gemma3:12b at 2048, memory.required.kv="608.0 MiB" (sliding layers windowed)
    new = llm.plan(spec("gemma3:12b"), "ollama", ctx=2048, runtime_version="0.6.5")
    assert new["kv_total"] == 608 * MiB


def test_ollama_llama3_library_default_is_q4_0():
    # ollama/ollama#3301: llama3:70b with 30 of 81 layers on the GPU, "CUDA0 buffer size = 13771.88 MiB"
    # (a Q4_K_M block would make it ~14700 MiB)
    assert ollama_tags.ollama_tag("llama3:70b")[1] == "Q4_0"
    assert ollama_tags.ollama_tag("qwen2.5:14b")[1] == "Q4_K_M"
    # the log's build (b2700 era) counted -ngl in repeating layers; from ggml-org/llama.cpp#18148 the output goes first
    r = llm.plan(spec("llama3:70b"), "llama.cpp", ctx=2048, ngl=30, runtime_version="b2700")
    assert abs((r["weights"] - r["host_weights"]) / MiB / 13771.88 - 1) < 0.01


# ---------------------------------------------------------------- llama.cpp

def test_llamacpp_old_deepseek_full_mla_kv_self_size():
    # ollama/ollama#8447 (January 2025 llama.cpp inside Ollama): kv_size = 2048, type_k = 'f16', n_layer = 61:
    # "CPU KV buffer size = 9600.00 MiB", "CUDA0 KV buffer size = 160.00 MiB", "KV self size = 9760.00 MiB"
    r = llm.plan(spec("deepseek-ai/DeepSeek-V3"), "llama.cpp", ctx=2048, kv_dtype="f16", mla_cache="full", ngl=1)
    assert r["kv_total"] == 9760 * MiB
    assert r["kv_per_layer"]["full"] == 160 * MiB


def test_llamacpp_model_size_lines():
    # ollama/ollama#6279: "model ftype = Q4_0 ... model size = 37.22 GiB (4.53 BPW)" (Llama 3.1 70B Instruct)
    q = llm.plan(spec("llama3.1:70b-instruct-q4_0"), "llama.cpp", ctx=2048)
    assert abs(q["weights"] / GiB / 37.22 - 1) < 0.005
    # ggml-org/llama.cpp#13194, llama-bench: "gemma3 12B Q4_K - Medium | 6.79 GiB | 11.77 B"
    g = llm.plan(spec("google/gemma-3-12b-it"), "llama.cpp", ctx=8192, weights_dtype="Q4_K_M")
    assert abs(g["weights"] / GiB / 6.79 - 1) < 0.005
    # ollama/ollama#8361: an F16 Llama-3.1-8B, "CPU_Mapped model buffer size = 15317.02 MiB" + "CUDA0 ... 1.02 MiB"
    f = llm.plan(spec("meta-llama/Llama-3.1-8B-Instruct"), "llama.cpp", ctx=8192, weights_dtype="f16")
    assert abs(f["weights"] / MiB / 15318.04 - 1) < 0.002


# ---------------------------------------------------------------- vLLM

def test_vllm_fp8_cache_tokens_and_one_request_need():
    # vllm-project/vllm#25350 (--kv-cache-dtype fp8, Qwen3-30B-A3B geometry):
    #   "Available KV cache memory: 10.55 GiB", "GPU KV cache size: 230,528 tokens" (printed memory rounded to 0.01)
    #   --max-model-len 221000: "(10.12 GiB KV cache is needed ... available KV cache memory (5.59 GiB) ...
    #   estimated maximum model length is 122080"
    s = spec("Qwen/Qwen3-30B-A3B-FP8")
    assert llm.vllm_kv_tokens(s, 10.545 * GiB, "fp8") <= 230528 <= llm.vllm_kv_tokens(s, 10.555 * GiB, "fp8")
    assert llm.vllm_kv_tokens(s, 5.585 * GiB, "fp8") <= 122080 <= llm.vllm_kv_tokens(s, 5.595 * GiB, "fp8")
    r = llm.plan(s, "vllm", ctx=221000, kv_dtype="fp8", runtime_version="0.10.2")
    assert round(r["kv_total"] / GiB, 2) == 10.12


def test_vllm_a100_pool_within_five_percent():
    # vllm-project/vllm#10511: Meta-Llama-3-8B, total_gpu_memory 79.22GiB x 0.90, model weights take 14.96GiB,
    # available_kv_cache_memory 53.29GiB (printed non_torch_memory 1.79GiB, activation peak 1.26GiB)
    r = llm.plan(spec("meta-llama/Meta-Llama-3-8B"), "vllm", ctx=8192, vram=79.22 * GiB, runtime_version="0.6.5",
                 gpu_memory_utilization=0.9)
    assert abs(r["weights"] / GiB / 14.96 - 1) < 0.01
    assert abs(r["kv_capacity_bytes"] / GiB / 53.29 - 1) < 0.05
    assert r["fits_as_requested"] is True


# ---------------------------------------------------------------- batch 4 (vLLM with the GPU total)

def test_vllm_keeps_small_defaults_on_an_a100():
    # dennislee22/vLLM-benchmarking, vLLM 0.10.1.1 on an A100 80 GB: "Chunked prefill is enabled with
    # max_num_batched_tokens=2048"; Qwen2-7B-Instruct, --gpu-memory-utilization 0.25 --max-model-len 16384:
    # "Model loading took 14.2488 GiB", "Available KV cache memory: 5.01 GiB", "GPU KV cache size: 93,872 tokens";
    # its log prints "Using FlashInfer for top-p & top-k sampling" (flashinfer-python installed)
    s = spec("Qwen/Qwen2.5-7B-Instruct")
    a100 = llm.plan(s, "vllm", ctx=16384, vram=79.25 * GiB, gpu_memory_utilization=0.25, runtime_version="0.10.1.1",
                    gpu_name="NVIDIA A100-SXM4-80GB", vllm_sampler="flashinfer")
    assert abs(a100["kv_capacity_tokens"] / 93872 - 1) < 0.05
    # the same card without its name gets vLLM's H100 defaults (1024 sequences): a larger sampler peak
    other = llm.plan(s, "vllm", ctx=16384, vram=79.25 * GiB, gpu_memory_utilization=0.25, runtime_version="0.10.1.1",
                     vllm_sampler="flashinfer")
    assert other["overhead"]["activation_profile"] > a100["overhead"]["activation_profile"]


def test_vllm_011_sampler_peak_on_1024_sequences():
    # llm-d/llm-d-benchmark empirical-vllm-memory-results.md, H100 79.18 GiB, utilization 0.9, max-model-len 16000:
    # Llama-3.1-8B "Peak activation memory: 4.76 GiB", "Available KV cache memory: 51.38 GiB";
    # Qwen3-32B: 5.64 GiB peak, 4.45 GiB available at 16000 (starts), fails at 32000
    r = llm.plan(spec("meta-llama/Llama-3.1-8B-Instruct"), "vllm", ctx=16000, vram=79.18 * GiB, runtime_version="0.11")
    assert abs(r["overhead"]["activation_profile"] / GiB / 4.76 - 1) < 0.05
    assert abs(r["kv_capacity_bytes"] / GiB / 51.38 - 1) < 0.02
    q16 = llm.plan(spec("Qwen/Qwen3-32B"), "vllm", ctx=16000, vram=79.18 * GiB, runtime_version="0.11")
    assert abs(q16["overhead"]["activation_profile"] / GiB / 5.64 - 1) < 0.05
    assert q16["fits_as_requested"] is True
    q32 = llm.plan(spec("Qwen/Qwen3-32B"), "vllm", ctx=32000, vram=79.18 * GiB, runtime_version="0.11")
    assert q32["fits_as_requested"] is False


# ---------------------------------------------------------------- batch 5 (vLLM 0.8 falling back to V0)

def test_vllm_08_falls_back_to_v0_on_a_t4_and_for_gguf():
    # huggingface/cookbook fine_tune_chatbot_docs_synthetic: vLLM 0.8.2 on a Tesla T4, "Compute Capability < 8.0 is
    # not supported by the V1 Engine. Falling back to V0."; total_gpu_memory (14.74GiB) x 0.89, Llama-3.2-3B,
    # max_model_len 2048: "# cuda blocks: 3637", "Maximum concurrency for 2048 tokens per request: 28.41x"
    s = spec("unsloth/Llama-3.2-3B-Instruct")
    t4 = llm.plan(s, "vllm", ctx=2048, vram=14.74 * GiB, runtime_version="0.8.2", gpu_memory_utilization=0.8938626454842437,
                  max_num_batched_tokens=2048, max_num_seqs=192, gpu_name="Tesla T4")
    assert any("V0 engine" in n for n in t4["notes"])
    # V0's concurrency is tokens / max_model_len (V1 counts whole blocks per request)
    assert t4["concurrency"] == t4["kv_capacity_tokens"] / 2048
    assert abs(t4["kv_capacity_tokens"] / 58192 - 1) < 0.10
    ampere = llm.plan(s, "vllm", ctx=2048, vram=14.74 * GiB, runtime_version="0.8.2", gpu_name="NVIDIA A10G")
    assert not any("V0 engine" in n for n in ampere["notes"])
    # eformat/ragit-dev: a Q8_0 GGUF of Llama-3.2-3B in vLLM (V0), --max-model-len 10000 on 7.65 GiB x 0.90:
    # V0 profiles the whole 10000-token prompt, so the activation term grows with the context
    g = llm.plan(s, "vllm", ctx=10000, vram=7.65 * GiB, runtime_version="0.8.2", weights_dtype="Q8_0", enforce_eager=True)
    assert any("GGUF" in n for n in g["notes"])
    assert g["overhead"]["activation_profile"] > 10000 * (2 * 8192 + 5 * 3072) * 2
