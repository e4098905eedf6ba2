"""The 2026 hybrid families against what the runtimes printed (batch 24, regression rows since these descriptions):
Qwen 3.5+ (gated-DeltaNet state pages next to full attention), Gemma 4 (global layers of another head shape) and
Llama 4 (chunked local attention). Every expected value is a printed figure:
  - noonghunna/club-3090#612, vLLM 0.24.0: Qwen3.6-35B-A3B NVFP4 on an RTX 5090, fp8 cache, max_model_len 131072,
    prefix caching: 'Available KV cache memory: 5.98 GiB', 'GPU KV cache size: 567,978 tokens', 4.33x;
  - mitchross/talos-argocd-proxmox PR 1995, vLLM 0.27.1: Qwen3.8-27B-FP8 at tensor parallel 2 on RTX 3090s, fp8
    cache, 131072, prefix caching: 4.99 GiB a GPU, 302,921 tokens, 2.31x;
  - kenrollins/gemma-forge journal, vLLM 0.19.0: Gemma-4-31B bf16 at TP 4 on L4s, 16384: 4.12 GiB, 17,968 tokens;
    the NVFP4 build at TP 2, fp8 cache, 4096: ~2.39 GiB a GPU, 10,432 tokens, 3.58x;
  - kyuz0/amd-strix-halo-toolboxes llama-bench: 'gemma4 31B BF16 | 57.18 GiB | 30.70 B';
  - vllm-project/vllm#16712: Llama-4-Scout bf16 at TP 2 on two 93.02 GiB H100 NVL: out of memory loading."""
import pytest

from gpu_garden.memory.llm import cache
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30
HALF = 0.005 * GiB  # vLLM prints the memory to 0.01 GiB


def _pool(spec, gib, kv, ctx, **kw):
    """vLLM's pool for the printed memory and the two ends of its rounding."""
    return [cache.vllm_pool(spec, gib * GiB + d, kv, ctx, **kw) for d in (-HALF, 0, HALF)]


def test_qwen36_35b_a3b_tokens_and_concurrency_vllm_024():
    s = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    assert (s.layer_kinds.count("full"), s.layer_kinds.count("linear")) == (10, 30)
    lo, mid, hi = _pool(s, 5.98, "fp8", 131072, max_batched=8192, state_blocks=2, tokens_from_concurrency=True)
    assert lo["tokens"] <= 567978 <= hi["tokens"]
    assert round(mid["concurrency"], 2) == 4.33


def test_qwen36_35b_a3b_state_page_sets_the_attention_block():
    # 3 x 8192 conv values in bf16 + 32 x 128 x 128 float32 state = 2,146,304 bytes = 2096 tokens x 10 x 2 x 256 x 1
    lay = cache.vllm_layout(llm.describe(model="Qwen/Qwen3.6-35B-A3B"), "fp8")
    assert lay["block"]["full"] == 2096 and lay["page"] == 2146304
    assert lay["size"] == 10 and lay["groups"] == {"full": 1, "linear": 3}


def test_qwen38_27b_tp2_tokens_and_concurrency_vllm_0271():
    s = llm.vllm_per_rank(llm.describe(model="Qwen/Qwen3.8-27B-FP8"), 2)
    lo, mid, hi = _pool(s, 4.99, "fp8", 131072, max_batched=8192, state_blocks=2, tokens_from_concurrency=True)
    assert lo["tokens"] <= 302921 <= hi["tokens"]
    assert round(mid["concurrency"], 2) == 2.31


def test_qwen35_state_pages_need_prefix_caching_blocks():
    # without prefix caching a state group holds one page per request: 299 / 66 blocks, not the printed 4.33x
    s = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    got = cache.vllm_pool(s, 5.98 * GiB, "fp8", 131072, max_batched=8192, state_blocks=1, tokens_from_concurrency=True)
    assert round(got["concurrency"], 2) != 4.33


def test_gemma4_31b_tp4_bf16_tokens_vllm_019():
    s = llm.vllm_per_rank(llm.describe(model="google/gemma-4-31B-it"), 4)
    lo, _, hi = _pool(s, 4.12, "f16", 16384, max_batched=2048)
    assert lo["tokens"] <= 17968 <= hi["tokens"]


def test_gemma4_31b_tp2_fp8_tokens_and_concurrency_vllm_019():
    # the global layers cache K and V (2 heads x 512 x 2 at TP 2): a block of 32 tokens in the sliding layers' page
    s = llm.vllm_per_rank(llm.describe(model="nvidia/Gemma-4-31B-IT-NVFP4"), 2)
    lo, mid, hi = _pool(s, 2.39, "fp8", 4096, max_batched=2048)
    assert lo["tokens"] <= 10432 <= hi["tokens"]
    assert round(mid["concurrency"], 2) == 3.58
    assert cache.vllm_layout(s, "fp8")["block"] == {"sliding": 16, "full": 32}


def test_gemma4_31b_llama_bench_parameters_and_size():
    s = llm.describe(model="google/gemma-4-31B-it")
    assert abs(s.params / 1e9 - 30.70) <= 0.005
    w = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="BF16")["weights"] / GiB
    assert abs(w / 57.18 - 1) <= 0.002


def test_llama4_scout_chunked_layers_and_oom_at_tp2():
    s = llm.describe(model="meta-llama/Llama-4-Scout-17B-16E-Instruct")
    # transformers Llama4TextConfig: every 4th layer global (NoPE), the others chunked at attention_chunk_size
    assert s.layer_kinds.count("full") == 12 and s.sliding_window == 8192
    r = llm.plan(s, "vllm", ctx=1000, kv_dtype="fp8", vram=93.02 * GiB, runtime_version="0.8.4",
                 gpu_memory_utilization=0.99, tensor_parallel_size=2, gpu_name="NVIDIA H100 NVL")
    assert not r["fits_as_requested"]


def test_qwen36_35b_a3b_llama_bench_parameters_and_size():
    # 'qwen35moe 35B.A3B BF16 | 64.60 GiB | 34.66 B' (kyuz0/amd-strix-halo-toolboxes, Qwen3.6-35B-A3B-BF16 logs; read
    # after this description was written: a first-sight check). Its UD-Q4_K_XL build prints 35.51 B: that GGUF also
    # carries the multi-token-prediction layer, which kv leaves out
    s = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    assert abs(s.params / 1e9 - 34.66) <= 0.005
    w = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="BF16")["weights"] / GiB
    assert abs(w / 64.60 - 1) <= 0.002


def test_qwen35_config_without_attn_output_gate_keeps_the_gated_q_proj(tmp_path):
    # transformers Qwen3_5Attention always builds q_proj with heads x head_dim x 2; a config.json that leaves
    # attn_output_gate out is the same model (llama-bench's 34.66 B above)
    import json
    from gpu_garden.memory.llm.names import MODELS_DIR
    cfg = json.loads((MODELS_DIR / "Qwen3.6-35B-A3B.json").read_text())
    cfg["text_config"].pop("attn_output_gate")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert abs(llm.describe(config=str(path)).params / 1e9 - 34.66) <= 0.005


def test_llamacpp_keeps_gemma4_and_llama4_windows():
    # llama-model.cpp: LLM_ARCH_GEMMA4 swa_type STANDARD, Llama 4 CHUNKED (llama_kv_cache_iswa). Gemma-4-31B at -c 32768,
    # one slot, -ub 512, f16: 10 global layers x 32768 cells x 4 x 512 x 2 x 2 bytes = 2560 MiB, and 50 sliding layers
    # x (1024 + 512 -> 1536 cells) x 16 x 256 x 2 x 2 bytes = 1200 MiB (hand-derived from those rules)
    r = llm.plan(llm.describe(model="google/gemma-4-31B-it"), "llama.cpp", ctx=32768, weights_dtype="Q4_K_M")
    assert r["kv_total"] == (2560 + 1200) * (1 << 20)
    s = llm.describe(model="meta-llama/Llama-4-Scout-17B-16E-Instruct")
    r = llm.plan(s, "llama.cpp", ctx=32768, weights_dtype="Q4_K_M")   # 36 chunked layers keep 8192 + 512 cells
    assert r["kv_total"] == (12 * 32768 + 36 * 8704) * 8 * 128 * 2 * 2


def test_prefix_caching_knob_reaches_the_state_pages():
    # the club-3090#612 run (--enable-prefix-caching in its args: 4.33x printed); without it a state group holds one
    # page a request, and not given is without it (vLLM's default for a hybrid model)
    s = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    knobs = dict(kv_dtype="fp8", weights_dtype="nvfp4", vram=31.36 * GiB, runtime_version="0.24.0", max_num_seqs=1,
                 max_num_batched_tokens=8192, gpu_name="NVIDIA GeForce RTX 5090")
    on = llm.plan(s, "vllm", ctx=131072, prefix_caching=True, **knobs)
    off = llm.plan(s, "vllm", ctx=131072, prefix_caching=False, **knobs)
    assert on["kv_detail"]["pool_args"]["state_blocks"] == 2 and off["kv_detail"]["pool_args"]["state_blocks"] == 1
    assert llm.plan(s, "vllm", ctx=131072, **knobs)["kv_detail"]["pool_args"]["state_blocks"] == 1
    assert off["kv_capacity_tokens"] > on["kv_capacity_tokens"]


def test_vllm_llama4_chunked_layers_full_while_the_hybrid_manager_was_off_for_them():
    # vllm#21761 (after 0.10.0) disabled the hybrid manager for chunked local attention by default: all 48 layers keep
    # 32768 tokens x 8 KV heads x 128 x 2 x 2 bytes; with it (0.10.0, and again from #29627) 36 of them keep a chunk
    s = llm.describe(model="meta-llama/Llama-4-Scout-17B-16E-Instruct")
    kv = {v: llm.plan(s, "vllm", ctx=32768, runtime_version=v)["kv_total"] for v in ("0.11.0", "0.10.0", "0.13.0")}
    assert kv["0.11.0"] == 48 * 32768 * 8 * 128 * 2 * 2
    assert kv["0.10.0"] == kv["0.13.0"] < kv["0.11.0"] / 2


@pytest.mark.parametrize("model,printed_b,mtp", [
    # llama-bench (kyuz0/amd-strix-halo-toolboxes): 'qwen35 27B Q8_0 | 27.32 B' (Qwen3.6-27B-UD-Q8_K_XL) and
    # 'qwen35moe 35B.A3B Q4_K - Medium | 35.51 B' (Qwen3.6-35B-A3B-UD-Q4_K_XL): those GGUFs carry the multi-token-
    # prediction layer kv leaves out, counted here by hand from the config: a gated-attention layer, its MLP (the MoE:
    # 256 experts + shared expert + router + shared gate) and the 2 x hidden -> hidden fc
    ("Qwen/Qwen3.6-27B", 27.32, 5120 * 24 * 256 * 2 + 2 * 5120 * 4 * 256 + 24 * 256 * 5120 + 3 * 5120 * 17408
     + 2 * 5120 * 5120),
    ("Qwen/Qwen3.6-35B-A3B", 35.51, 2048 * 16 * 256 * 2 + 2 * 2048 * 2 * 256 + 16 * 256 * 2048
     + 257 * 3 * 2048 * 512 + 256 * 2048 + 2048 + 2 * 2048 * 2048),
])
def test_qwen36_llama_bench_parameters_with_the_mtp_layer(model, printed_b, mtp):
    s = llm.describe(model=model)
    assert abs((s.params + mtp) / 1e9 - printed_b) <= 0.006
