"""poolside's Laguna (LagunaForCausalLM, model_type laguna), read from a config.json given with --config: spec.from_config
calls read_layers for each layer's query heads and MLP kind, params.count_params calls laguna_params for the weights.
No built-in: no copy of Laguna-S-2.1's config.json was read (task kv56), so kv has no figures of its own for it.

As vLLM builds it (vllm/model_executor/models/laguna.py at vllm-project/vllm 9c1e402947d5ed8579451a462bc5cd04b68f09da):
  - LagunaDecoderLayer: query heads num_attention_heads_per_layer[i] (else num_attention_heads); every layer's KV heads
    are num_key_value_heads and its head size head_dim, so the cache is a generic hybrid one: K and V of those heads in
    every layer, the layer_types' sliding_attention layers with config.sliding_window (per_layer_sliding_window), the
    others full attention (LagunaModel clears cache_config.sliding_window so no fallback window reaches them);
  - LagunaAttention: qkv_proj hidden -> (heads + 2 KV heads) x head_dim (bias: qkv_bias), o_proj heads x head_dim ->
    hidden (bias: attention_bias), q_norm and k_norm of head_dim; g_proj hidden -> heads when gating is True or
    'per-head', heads x head_dim for another truthy gating (per-element), none when gating is false; a sink per query head
    on sliding layers when swa_attention_sink_enabled (a parameter, not a cache);
  - the MLP: a layer is MoE when it is not in mlp_only_layers, num_experts > 0 and (i + 1) % decoder_sparse_step == 0
    (LagunaMoE: a router hidden -> experts, quant_config None; experts of moe_intermediate_size; one shared expert of
    shared_expert_intermediate_size when it is > 0; e_score_correction_bias, one float32 a expert), else LagunaMLP of
    intermediate_size (gate, up, down);
  - input and post-attention RMSNorm a layer, the final norm, the token table and an lm_head unless tied.
What kv does not read from Laguna: SGLang's Laguna model and the DFlash drafter (its own layers and KV pool) were not
read; a DFlash drafter is not sized."""
from ..errors import UserError
from .spec import SLIDING

_MAX_HEADS = 4096


def is_laguna(cfg: dict) -> bool:
    return str(cfg.get("model_type", "")).startswith("laguna")


def _flag_list(cfg: dict, key: str, n: int, name: str) -> list | None:
    v = cfg.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != n:
        raise UserError(f"{name}: {key} must list one entry for each of its {n} layers, got "
                        f"{len(v) if isinstance(v, list) else type(v).__name__}")
    return v


def read_layers(cfg: dict, n_layers: int, n_heads: int, n_kv: int, n_experts: int, name: str) -> list:
    """[(query heads, is_moe)] per layer, as vLLM's LagunaDecoderLayer decides them."""
    heads = _flag_list(cfg, "num_attention_heads_per_layer", n_layers, name) or [n_heads] * n_layers
    for i, h in enumerate(heads):
        if isinstance(h, bool) or not isinstance(h, int) or not n_kv <= h <= _MAX_HEADS or h % n_kv:
            raise UserError(f"{name}: num_attention_heads_per_layer[{i}] = {h!r} must be a multiple of "
                            f"num_key_value_heads ({n_kv})")
    only = cfg.get("mlp_only_layers") or []
    if not isinstance(only, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in only):
        raise UserError(f"{name}: mlp_only_layers must be a list of layer indices, got {only!r}")
    step = cfg.get("decoder_sparse_step", 1)
    if isinstance(step, bool) or not isinstance(step, int) or step < 1:
        raise UserError(f"{name}: decoder_sparse_step = {step!r} must be a positive integer")
    moe = [i not in only and n_experts > 0 and (i + 1) % step == 0 for i in range(n_layers)]
    kinds = _flag_list(cfg, "mlp_layer_types", n_layers, name)
    if kinds is not None and [str(k) == "sparse" for k in kinds] != moe:
        raise UserError(f"{name}: mlp_layer_types {kinds[:8]}... disagree with mlp_only_layers / decoder_sparse_step "
                        "(vLLM builds the MoE layers from the latter): kv does not guess which one holds")
    return list(zip(heads, moe))


def gate_width(cfg: dict, heads: int, head_dim: int) -> int:
    """g_proj's outputs in one layer (vLLM LagunaAttention: gate_per_head = gating is True or gating == 'per-head')."""
    g = cfg.get("gating")
    if not g:
        return 0
    return heads if (g is True or g == "per-head") else heads * head_dim


def apply_layers(spec, cfg: dict, layers: list) -> None:
    """Notes only: the cache is the generic one (every layer num_key_value_heads x head_dim, sliding layers windowed)."""
    heads = sorted({h for h, _ in layers})
    sinks = "with a sink per query head on its sliding layers" if cfg.get("swa_attention_sink_enabled") else "no sinks"
    spec.notes.append(f"Laguna layers: {', '.join(map(str, heads))} query heads by layer over {spec.n_kv_heads} KV heads "
                      f"x {spec.head_dim_k} in every layer; attention output gate {cfg.get('gating')!r}, {sinks}; "
                      f"{sum(m for _, m in layers)} of {len(layers)} layers MoE (vLLM laguna.py)")
    if "decoder_sparse_step" not in cfg and spec.n_experts:
        spec.notes.append("decoder_sparse_step not in the config: read as 1 (every layer outside mlp_only_layers MoE)")


def laguna_params(cfg: dict, s, layers: list) -> tuple:
    """(total, matmul, routed experts) parameters, layer by layer (s.layer_params, s.moe_layers)."""
    d, hd, kv, V = s.hidden, s.head_dim_k, s.n_kv_heads, s.vocab
    sink_layers = bool(cfg.get("swa_attention_sink_enabled"))
    qkv_bias, o_bias = bool(cfg.get("qkv_bias")), bool(cfg.get("attention_bias"))
    shared_w = int(cfg.get("shared_expert_intermediate_size") or 0)
    s.shared_intermediate = shared_w
    routed = s.n_experts * 3 * d * s.moe_intermediate
    linear = other = experts = 0
    s.layer_params = []
    for (h, moe), kind in zip(layers, s.layer_kinds):
        before = linear + other
        linear += d * (h + 2 * kv) * hd + h * hd * d + d * gate_width(cfg, h, hd)
        other += 2 * hd + ((h + 2 * kv) * hd if qkv_bias else 0) + (d if o_bias else 0)
        if sink_layers and kind == SLIDING:
            other += h
        if moe:
            linear += routed + 3 * d * shared_w
            experts += routed
            other += s.n_experts * d + s.n_experts   # router (quant_config None) and e_score_correction_bias
        else:
            linear += 3 * d * s.intermediate
        other += 2 * d
        s.layer_params.append(linear + other - before)
    s.moe_layers = tuple(m for _, m in layers) if s.n_experts else ()
    other += V * d * (1 if cfg.get("tie_word_embeddings") else 2) + d
    return linear + other, linear, experts
