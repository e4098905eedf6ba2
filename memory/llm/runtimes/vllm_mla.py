"""vLLM and MLA (the latent KV cache of DeepSeek-V2/V3 and the models built like them), by version: the cache layout
vllm.py's evaluate sizes the pool with (cache.py: latent, latent-256b, heads; DeepSeek-V4's pool form), and the copies
of the attention weights vLLM adds beside the checkpoint's (0.7.x V0's absorbed matrices, the 16-bit kv_b_proj copy from
0.8), which plan_weights.py adds to one GPU's weights."""
from ..weights import skip_matcher
from . import at_least

# MLA by version. vLLM's MLA backends (the latent cache of DeepSeek-V2/V3) came with 0.7.1; from DeepSeek-V2's
# arrival in 0.5.1 until then, models/deepseek_v2.py ran plain attention with K and V per head at qk_head_dim (V
# zero-padded to it): 192 + 192 values a head and layer. V0's CacheEngine pads every MLA cache entry to 256 bytes
# (_align_cache / align_to_256bytes, VLLM_CUDA_MEM_ALIGN_KV_CACHE on by default): 576 fp16 values take 1280 bytes;
# V1's MLA spec does not pad.
MLA_FROM = (0, 7, 1)
# 0.7.x V0 MLACommonImpl.process_weights_after_loading with VLLM_MLA_PERFORM_MATRIX_ABSORPTION (on by default) keeps,
# next to the raw weights prefill uses ("we end up with absorbed weights for decode and another copy of raw weights
# for prefill"), W_Q_UK (q_in x heads*kv_lora) and W_UV_O (heads*kv_lora x hidden) in the activation dtype (fp8 when
# an fp8 checkpoint is requantized), W_QR (q_in x heads*rope, activation dtype), and for a quantized kv_b_proj its
# dequantized copy (W_UK, W_UV). 0.8 dropped the absorbed copies (W_UK_T / W_UV bmm on the raw weights).
MLA_ABSORB_UNTIL = (0, 8)


def mla_layout(spec, s) -> str:
    """The MLA cache layout of this vLLM version and engine (cache.py: latent, latent-256b, heads); DeepSeek-V4's pool
    form (deepseek_v4.layout_kind: packed from 0.26)."""
    if spec.dsv4:
        from ..deepseek_v4 import layout_kind
        return layout_kind(s["version"], s["v1"])
    if not spec.mla:
        return "latent"
    # VLLM_MLA_DISABLE=1 (ModelConfig.use_mla = is_deepseek_mla and not VLLM_MLA_DISABLE): deepseek_v2.py's decoder layer
    # builds DeepseekV2Attention, Attention(num_heads, qk_nope + qk_rope, num_kv_heads=num_heads) with V padded to that
    # head size: the full heads' K and V, as before MLA (batches 88-89, after first sight: Mistral-Small-4 on a GB10)
    if not at_least(s["version"], *MLA_FROM) or s.get("mla_disable"):
        return "heads"
    return "latent" if s["v1"] else "latent-256b"


def mla_absorbed_bytes(spec, s, fmt: str) -> int:
    """Bytes of the absorbed MLA matrices 0.7.x's V0 engine adds to one GPU's weights (0 elsewhere)."""
    v = s["version"]
    if not spec.mla or s["v1"] or not at_least(v, *MLA_FROM) or at_least(v, *MLA_ABSORB_UNTIL) or s.get("mla_disable"):
        return 0
    n, lat, q_in = spec.n_heads, spec.kv_lora_rank, spec.mla_q_lora or spec.hidden
    big = 1 if fmt.startswith("fp8") else 2
    per = (q_in * n * lat + n * lat * spec.hidden) * big + q_in * n * spec.qk_rope_head_dim * 2
    if fmt and not fmt.startswith("fp8") and fmt not in ("bf16", "fp16", "f16", "float16", "bfloat16", "fp32"):
        per += lat * n * ((spec.mla_qk_nope or 128) + (spec.mla_v_head or 128)) * 2
    return per * spec.n_layers


# From 0.8 (V0 and V1) MLACommonImpl.process_weights_after_loading takes W_UK_T / W_UV as views of kv_b_proj's weight,
# which for a 16-bit checkpoint is the weight itself; a quantized kv_b_proj is first dequantized
# (get_and_maybe_dequant_weights: the quant method applied to an identity matrix; "we just store fp16/bf16 copies and
# perform the bmm's in 16-bit"), and the views keep that copy: kv_lora_rank x heads x (nope + v) values a layer in the
# activation dtype, inside "Model loading took". 0.7.x's V0 counts it with its absorbed matrices (above).
UNQUANTIZED = ("", "bf16", "fp16", "f16", "float16", "bfloat16", "fp32", "f32", "float32", "auto")


def mla_dequant_bytes(spec, s, fmt: str, quant_skip=()) -> int:
    """Bytes of the 16-bit kv_b_proj copy vLLM >= 0.8 keeps for MLA when the checkpoint quantizes it (0 elsewhere)."""
    if not spec.mla or not at_least(s["version"], *MLA_ABSORB_UNTIL) or s.get("mla_disable"):
        return 0  # VLLM_MLA_DISABLE: no MLA impl, kv_b_proj runs as a plain linear layer (no copy)
    if fmt in UNQUANTIZED:
        return 0
    skipped = skip_matcher(quant_skip)  # a kv_b_proj the checkpoint keeps in 16 bits needs no copy
    per = spec.kv_lora_rank * spec.n_heads * ((spec.mla_qk_nope or 128) + (spec.mla_v_head or 128)) * 2
    return per * sum(not skipped(f"model.layers.{i}.self_attn.kv_b_proj") for i in range(spec.n_layers))
