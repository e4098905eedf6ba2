"""Task ellm79 (kv-accuracy round 101, batches 105-107 after their first sight).

1. llama.cpp -ot with a second pattern that keeps a layer's attention tensors on the CPU (batch 105's
   mimi-...-nofa-ot36-attn49-oom: 'blk\\.([0-9]|[1-4][0-9])\\.attn_.*\\.weight=CPU'). qwen35moe's tensors
   (llama-model.cpp case LLM_ARCH_QWEN35MOE, TheTom/llama-cpp-turboquant at 69d8e4be) for Qwen3.5-122B-A10B (hidden
   3072, 32 heads, 2 KV heads, head_dim 256, DeltaNet 16 key heads x 128, 64 value heads x 128; 12 attention layers,
   every 4th, 36 DeltaNet layers):
     attention layer: attn_q 3072 x 32 x 256 x 2 = 50,331,648; attn_k = attn_v = 3072 x 2 x 256 = 1,572,864;
       attn_output 8192 x 3072 = 25,165,824; sum 78,643,200 values of matrices; attn_norm 3072, attn_q_norm /
       attn_k_norm 256 each (F32)
     DeltaNet layer: attn_qkv 3072 x (2 x 16 x 128 + 64 x 128) = 3072 x 12288 = 37,748,736; attn_gate 3072 x 8192 =
       25,165,824; sum 62,914,560; attn_norm 3072 (F32)
   The file's loader printed f32 361, q8_0 373, q4_K 96, q5_K 48, q6_K 1: --gguf-types places the experts q4_K / q5_K,
   the head q6_K and every other matrix q8_0 (34 B a 32-value block, 8.5 bits):
     attention layer 78,643,200 x 34 / 32 = 83,558,400 B + (3072 + 512) x 4 = 14,336 B -> 83,572,736 B
     DeltaNet layer  62,914,560 x 34 / 32 = 66,846,720 B + 3072 x 4 = 12,288 B       -> 66,859,008 B
     all 48 layers: 12 x 83,572,736 + 36 x 66,859,008 = 1,002,872,832 + 2,406,924,288 = 3,409,797,120 B = 3251.84 MiB
   The log: GPU model buffers 22095.88 MiB with the experts' pattern alone, 18844.04 MiB with both: 3251.84 MiB.
   Before the change the second pattern was refused ('also matches blk.0.attn_norm.weight').
"""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gguf_types import given

MiB = 1 << 20
EXPS = r"blk\.([0-9]|1[0-3]|2[0-4]|3[1-9]|4[0-7])\.ffn_.*_exps\.weight=CPU"
ATTN = r"blk\.([0-9]|[1-4][0-9])\.attn_.*\.weight=CPU"
TYPES = {"f32": 361, "q8_0": 373, "q4_K": 96, "q5_K": 48, "q6_K": 1}


def _spec():
    return given(llm.describe(model="Qwen/Qwen3.5-122B-A10B"), TYPES, "Q4_K_M")


def test_ot_attention_tensors_bytes_per_layer():
    from gpu_garden.memory.llm.runtimes.llamacpp_offload import cpu_attn_bytes, override_cpu_layers
    spec = _spec()
    per = cpu_attn_bytes(spec, [EXPS, ATTN])
    assert per[3] == 83_572_736 and per[0] == 66_859_008  # layer 3 attention, layer 0 DeltaNet
    assert sum(per) == 3_409_797_120 and round(sum(per) / MiB, 2) == 3251.84
    assert cpu_attn_bytes(spec, [EXPS]) == (0,) * 48  # the experts' pattern alone names no attention tensor
    # the first override decides: a CUDA0 override before it keeps layer 3's attention on the one device
    assert cpu_attn_bytes(spec, [r"blk\.3\.attn=CUDA0", EXPS, ATTN], True)[3] == 0
    layers, _ = override_cpu_layers(spec, [EXPS, ATTN])
    assert layers == (*range(14), *range(20, 25), *range(31, 48))
    with pytest.raises(UserError, match="also matches blk.0.ssm_out.weight"):  # DeltaNet's ssm_* are not attn_ names
        override_cpu_layers(spec, [EXPS, r"blk\.0\.ssm_out\.weight=CPU"])


def test_ot_attention_moves_gpu_weights_by_that_much():
    kw = dict(ctx=131072, parallel=1, kv_dtype="f16", weights_dtype="Q4_K_M", vram=16269 * MiB, ngl=999,
              runtime_version="b8829", flash_attn="off", ubatch=1586, num_gpus=4, gguf_types=TYPES)
    spec = llm.describe(model="Qwen/Qwen3.5-122B-A10B")
    one = llm.plan(spec, "llama.cpp", override_tensor=[EXPS], **kw)
    two = llm.plan(spec, "llama.cpp", override_tensor=[EXPS, ATTN], **kw)
    assert two["host_weights"] - one["host_weights"] == 3_409_797_120  # weights - host_weights: on the GPUs
    assert one["weights"] == two["weights"]


def test_ot_attention_needs_the_files_types():
    from gpu_garden.memory.llm.runtimes.llamacpp_offload import cpu_attn_bytes
    with pytest.raises(UserError, match="give --gguf FILE or --gguf-types"):
        cpu_attn_bytes(llm.describe(model="Qwen/Qwen3.5-122B-A10B"), [ATTN])


def test_ot_attention_other_architectures_still_refused():
    from gpu_garden.memory.llm.runtimes.llamacpp_offload import override_cpu_layers
    with pytest.raises(UserError, match="also matches blk.0.attn_norm.weight"):
        override_cpu_layers(llm.describe(model="Qwen/Qwen3-235B-A22B"), ["exps=CPU", ATTN])


def test_exl3_refused_naming_the_bits_it_needs():
    """2. EXL3 (turboderp-org/exllamav3 at 4f8ad01): conversion/quant_config.py writes each layer's bits_per_weight =
    trellis shape[-1] // 16 into quantization_config.json; conversion/compile.py writes the average 'bits' and
    'head_bits' into config.json. The name 'exl3' gives none of them: refused, naming them and --weights-gib (which
    sizes the checkpoint: 17 GiB given is 17 GiB placed). Before the change: 'unknown weights dtype' listing others."""
    spec = llm.describe(model="Qwen/Qwen3.8-27B")
    # kv55: the message names config.json's 'bits' as no size and the checkpoint folder (--config DIR) as exact
    with pytest.raises(UserError, match="EXL3 .*bits_per_weight.*config.json's 'bits'.*--config DIR.*--weights-gib"):
        llm.plan(spec, "vllm", ctx=8192, weights_dtype="exl3", vram=96 << 30)
    r = llm.plan(spec, "vllm", ctx=8192, weights_bytes=17 << 30, vram=96 << 30)
    assert r["weights"] >= 17 << 30


def test_sglang_fp4_e2m1_cell_counts_the_scales():
    """3. SGLang --kv-cache-dtype fp4_e2m1 (batch 107): model_runner_kv_cache_mixin.py get_cell_size_per_token gives an
    MHA model cell = kv heads x (head_dim + v_head_dim) x layers x 1 (element_size of float4_e2m1fn_x2), then
    cell // 2 + kv heads x head_dim x layers x 2 // 16 (MHATokenToKVPoolFP4's uint8 scale buffers, one per 16 values).
    Qwen2.5-1.5B (28 layers, 2 KV heads, head_dim 128): 2 x 256 x 28 = 14,336 -> 7,168 + 2 x 128 x 28 x 2 // 16 = 896
    -> 8,064 B a token (bf16: 2 x 256 x 28 x 2 = 28,672). jethac's GB10 logs at msf 0.4 print 5,539,718 fp4 tokens and
    1,557,709 bf16 tokens: 5,539,718 x 8,064 = 44.67e9 B and 1,557,709 x 28,672 = 44.66e9 B, the same pool (without
    the scales, 7,168 B, the fp4 count would be 4x the bf16 one, not 3.56x). Before the change: unknown KV cache type."""
    from gpu_garden.memory.llm.cache import norm_kv
    from gpu_garden.memory.llm.runtimes.sglang import cell_bytes
    spec = llm.describe(model="Qwen/Qwen2.5-1.5B-Instruct")
    assert norm_kv("fp4_e2m1", "sglang") == "fp4_e2m1"
    assert cell_bytes(spec, "fp4_e2m1") == 8064 and cell_bytes(spec, "bf16") == 28672
    with pytest.raises(UserError, match="vllm has no fp4_e2m1"):
        norm_kv("fp4_e2m1", "vllm")


def test_sglang_pool_follows_free_memory():
    """4. SGLang beside another process (batch 107's GB10 rows: a vLLM engine held ~94 GiB): profile_max_num_token
    (model_runner_kv_cache_mixin.py) takes rest = available after the weights - total_gpu_memory x (1 - msf), with
    total_gpu_memory the free memory init_torch_distributed read, so tokens = (msf x free0 - weights) / cell with free0
    the free memory less SGLang's CUDA context, whatever the card holds. Qwen2.5-1.5B bf16, msf 0.4, 119.63 GiB card,
    --free-gib 17: free0 = 17 GiB - context; cell 28,672 B. Before the change --free-gib was refused for SGLang."""
    from gpu_garden.memory.llm.runtimes.sglang import CUDA_CONTEXT
    spec = llm.describe(model="Qwen/Qwen2.5-1.5B-Instruct")
    GiB = 1 << 30
    kw = dict(ctx=32768, weights_dtype="bf16", vram=int(119.63 * GiB), mem_fraction_static=0.4)
    r = llm.plan(spec, "sglang", free_memory=17 * GiB, **kw)
    assert r["sglang_max_total_tokens"] == int((0.4 * (17 * GiB - CUDA_CONTEXT) - r["weights"]) // 28672)
    whole = llm.plan(spec, "sglang", **kw)  # the card's free memory: the pool 0.4 x 102.6 GiB larger
    assert whole["sglang_max_total_tokens"] - r["sglang_max_total_tokens"] == pytest.approx(
        0.4 * (int(119.63 * GiB) - 17 * GiB) / 28672, abs=1)
