"""The context a runtime serves a config.json with when no length is given (vLLM's max_model_len, SGLang's
context_length: the config's length keys and rope scaling) and the rotary cos/sin tables it precomputes. spec.from_config
fills LLMSpec.vllm_max_len, sglang_max_len and rope_cache_elems from them; spec.X still resolves to each name here."""
from .spec import FULL, SLIDING, LLMSpec, _int

# position encodings without a rotary table: Jamba's attention layers have none, the others learned tables or ALiBi
NO_ROPE_ARCHS = ("jamba", "gpt2", "bloom", "mpt", "opt", "gpt_bigcode")


# vLLM's ModelConfig._get_and_verify_max_len: the smallest of these config keys, times a rope_scaling factor (YaRN:
# original_max_position_embeddings x factor; not for su / longrope / llama3, nor Gemma 3, whose length is scaled
# already); a --max-model-len above it starts only when config.json's model_max_length allows it or with
# VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 ("User-specified max_model_len (N) is greater than the derived max_model_len")
VLLM_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                 "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")


def _rope_scaling(cfg: dict) -> dict | None:
    """The rope scaling vLLM's max length reads: transformers v5's rope_parameters (flat, or nested by layer type: the
    full-attention layers' set, which bounds the length) or the older rope_scaling (review16c R7)."""
    for key in ("rope_parameters", "rope_scaling"):
        rs = cfg.get(key)
        if isinstance(rs, dict) and isinstance(rs.get("full_attention"), dict):
            rs = rs["full_attention"]
        if isinstance(rs, dict) and (rs.get("rope_type") or rs.get("type") or "factor" in rs):
            return rs
    return None


def vllm_max_len(cfg: dict) -> int | None:
    """The longest --max-model-len vLLM accepts for this config.json without VLLM_ALLOW_LONG_MAX_MODEL_LEN."""
    found = [v for v in (cfg.get(k) for k in VLLM_LEN_KEYS) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0]
    if not found:
        return None
    derived = min(found)
    rs = _rope_scaling(cfg)
    kind = str((rs or {}).get("rope_type") or (rs or {}).get("type") or "")
    if rs and kind not in ("su", "longrope", "llama3") and "gemma3" not in str(cfg.get("model_type") or ""):
        factor = rs.get("factor", 1.0)
        factor = factor if isinstance(factor, (int, float)) and not isinstance(factor, bool) and factor > 0 else 1.0
        if kind == "yarn" and isinstance(rs.get("original_max_position_embeddings"), (int, float)):
            derived = rs["original_max_position_embeddings"]
        derived *= factor
    allowed = cfg.get("model_max_length")
    if isinstance(allowed, (int, float)) and not isinstance(allowed, bool) and allowed > derived:
        derived = allowed
    return int(min(derived, 1 << 30))


# SGLang's ModelConfig._derive_context_length: without --context-length the context is get_context_length(hf_text_config)
# (srt/utils/hf_transformers_utils.py at sgl-project/sglang 001adf56): the first of these keys, times rope_scaling's
# factor unless the scaling names original_max_position_embeddings or is llama3's; 2048 with none of them
SGLANG_LEN_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")


def sglang_max_len(cfg: dict) -> int | None:
    """The context SGLang serves this config.json with when --context-length is not given."""
    found = [v for v in (cfg.get(k) for k in SGLANG_LEN_KEYS) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0]
    if not found:
        return None
    rs = _rope_scaling(cfg) or {}
    factor = rs.get("factor", 1)
    if (not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor <= 0
            or "original_max_position_embeddings" in rs or rs.get("rope_type") == "llama3"):
        factor = 1
    return int(min(found[0] * factor, 1 << 30))


# the Qwen-VL / Qwen 3.5+ families, whose released configs give the rope an mrope_section (the built-ins keep no rope dict)
MROPE_ARCHS = ("qwen2_vl", "qwen2_5_vl", "qwen2_5_omni", "qwen3_vl", "qwen3_vl_moe", "qwen3_vl_text", "qwen3_vl_moe_text",
               "qwen3_omni_moe", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text")


def _mrope(cfg: dict, arch: str = "") -> bool:
    """The rope has an mrope_section (rope_scaling or rope_parameters; a MROPE_ARCHS family): vLLM's get_rope builds
    MRotaryEmbedding for it (rotary_embedding/__init__.py, default and YaRN rope types), whose cos/sin table covers
    4 x max_position_embeddings positions (mrope.py, from vllm bf3b79efb, 2025-02-05, v0.7.2: MROPE_TABLE_FROM)."""
    return (any(isinstance(cfg.get(k), dict) and "mrope_section" in cfg[k] for k in ("rope_scaling", "rope_parameters"))
            or cfg.get("model_type") in MROPE_ARCHS or arch in MROPE_ARCHS)


def _rope_cache_elems(cfg: dict, spec: LLMSpec) -> int:
    """Values of the cos/sin tables a runtime precomputes for the rotary embeddings (vLLM's RotaryEmbedding
    cos_sin_cache: one row of rotary_dim values per position, in the model's dtype, one table per distinct rope).
    Linear scaling tabulates max_position_embeddings x factor positions (LinearScalingRotaryEmbedding), YaRN
    original_max_position_embeddings x factor; Gemma 3's sliding layers keep a second, unscaled table
    (rope_local_base_freq). Gemma-3-4B: 131072 x 8 + 131072 positions x 256 = 0.56 GiB in bf16."""
    if not spec.attn_layers or not spec.max_ctx or spec.arch in NO_ROPE_ARCHS:
        return 0
    rp = cfg.get("rope_parameters") if isinstance(cfg.get("rope_parameters"), dict) else {}
    if isinstance(rp.get("full_attention"), dict) and spec.layer_kv_elems:
        # one table per layer kind (Gemma 4: the sliding layers' default rope over head_dim, the global layers'
        # proportional rope): vLLM's Gemma4RotaryEmbedding (layers/rotary_embedding/gemma4_rope.py, 0.19.0 and 0.22.0)
        # passes rotary_dim = head_size to RotaryEmbedding and zero-pads the unrotated frequencies, so a proportional
        # table is the whole global_head_dim wide; another rope type keeps partial_rotary_factor of the head
        dims = 0
        for kind, key in ((SLIDING, "sliding_attention"), (FULL, "full_attention")):
            if kind in spec.layer_kinds:
                i = spec.layer_kinds.index(kind)
                hd = spec.layer_kv_elems[i] // (2 * (spec.layer_kv_heads or [spec.n_kv_heads] * spec.n_layers)[i])
                par = rp.get(key) or {}
                if par.get("rope_type") == "proportional":
                    dims += hd
                    continue
                try:
                    dims += int(hd * float(par.get("partial_rotary_factor") or 1))
                except (TypeError, ValueError):
                    dims += hd
        return min(spec.max_ctx, 1 << 24) * dims
    rs = cfg.get("rope_scaling") if isinstance(cfg.get("rope_scaling"), dict) else {}
    kind = str(rs.get("rope_type") or rs.get("type") or "")
    try:
        factor = max(float(rs.get("factor") or 1), 1.0)
    except (TypeError, ValueError):
        factor = 1.0
    positions = spec.max_ctx
    if kind == "linear":
        positions = int(spec.max_ctx * factor)
    elif kind in ("yarn", "deepseek_yarn"):
        positions = int((_int(rs, "original_max_position_embeddings") or spec.max_ctx) * factor)
    if cfg.get("rope_local_base_freq"):
        positions += spec.max_ctx
    if spec.mla:
        dim = spec.qk_rope_head_dim
    else:
        try:
            dim = int(spec.head_dim_k * float(cfg.get("partial_rotary_factor") or 1))
        except (TypeError, ValueError):
            dim = spec.head_dim_k
    return min(positions, 1 << 24) * dim
