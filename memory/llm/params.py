"""A config.json's parameter count (all experts resident; the share inside decoder-block matmuls; the routed experts'
share) and the fixed recurrent state a sequence keeps (Mamba, gated DeltaNet): spec.from_config's arithmetic."""
from ..errors import UserError
from .spec import FFN, FULL, LINEAR, MAMBA, SHARED, SLIDING, LLMSpec, _int, _layer_kinds

# Nemotron-H's mamba_ssm_cache_dtype: the bytes of the temporal state's element (vLLM's torch dtype of that name)
SSM_CACHE_BYTES = {"float32": 4, "fp32": 4, "float16": 2, "bfloat16": 2}


def count_params(cfg: dict, s: LLMSpec) -> tuple:
    """Total parameters (all experts resident), the share inside decoder-block matmuls and, of those, the routed
    experts' matmuls."""
    if s.arch.startswith("nemotron_h"):
        return nemotron_h_params(cfg, s)
    from .nemotron_nas import is_nas, nas_params, read_blocks
    if is_nas(cfg):  # Llama-Nemotron NAS: each layer's own attention and FFN (block_configs)
        return nas_params(cfg, s, read_blocks(cfg, s.n_layers, s.n_heads, s.hidden, s.name))
    from .laguna import is_laguna, laguna_params, read_layers
    if is_laguna(cfg):  # poolside's Laguna: per-layer query heads, output gates and sinks (vLLM laguna.py)
        return laguna_params(cfg, s, read_layers(cfg, s.n_layers, s.n_heads, s.n_kv_heads, s.n_experts, s.name))
    d, H, V = s.hidden, s.n_heads, s.vocab
    tied = bool(cfg.get("tie_word_embeddings", False))
    embed = V * d
    head = 0 if tied else V * d
    bias = bool(cfg.get("attention_bias") or cfg.get("qkv_bias") or s.arch.startswith("qwen2"))
    if s.mla:
        qr = _int(cfg, "q_lora_rank") or 0
        nope = _int(cfg, "qk_nope_head_dim", default=128)
        vh = _int(cfg, "v_head_dim", default=128)
        qk = nope + s.qk_rope_head_dim
        q = (d * qr + qr * H * qk) if qr else d * H * qk
        attn = q + d * (s.kv_lora_rank + s.qk_rope_head_dim) + s.kv_lora_rank * H * (nope + vh) + H * vh * d
        attn_norms = s.kv_lora_rank + qr
        if s.index_head_dim:  # DeepSeek sparse attention's Lightning Indexer (vLLM deepseek_v2.py class Indexer):
            # wq_b (q_lora_rank -> index heads x index_head_dim) and wk (hidden -> index_head_dim) take the model's
            # quantization; weights_proj (hidden -> index heads, quant_config=None) and k_norm (a LayerNorm: weight
            # and bias) stay 16-bit, counted with the norms
            attn += qr * s.index_n_heads * s.index_head_dim + d * s.index_head_dim
            attn_norms += d * s.index_n_heads + 2 * s.index_head_dim
    else:
        hd, KV = s.head_dim_k, s.n_kv_heads
        # q_proj also emits a gate: Qwen3-Next, and every Qwen 3.5+ attention layer (transformers Qwen3_5Attention
        # builds heads x head_dim x 2 whatever attn_output_gate says)
        gate = 2 if (cfg.get("attn_output_gate") or s.arch.startswith(("qwen3_next", "qwen3_5"))) else 1
        attn = d * H * hd * gate + 2 * d * KV * hd + H * hd * d
        attn_norms = (2 * hd if (s.arch.startswith(("qwen3", "gemma3", "gemma4", "olmo2"))) else 0)
        if bias:
            attn += H * hd + 2 * KV * hd
    attn_full, gh, gkv = attn, 0, 0
    if s.layer_kv_heads and FULL in s.layer_kinds:  # Gemma 4's global layers: their own head size and KV heads
        i = s.layer_kinds.index(FULL)
        gkv = s.layer_kv_heads[i]
        gh = s.layer_kv_elems[i] // (2 * gkv)
        attn_full = d * H * gh + d * gkv * gh * (1 if cfg.get("attention_k_eq_v") else 2) + H * gh * d
    norms_full = 2 * gh if gh and attn_norms else attn_norms  # q_norm, k_norm at the global head size
    if SHARED in s.layer_kinds:  # Gemma 4 E2B / E4B (gemma4_ple.py): a shared layer's kind as the config gives it
        from .gemma4_ple import mlp_width, shared_layer_params, vllm_shared_kv_slots
        given = _layer_kinds(cfg, s.n_layers)
    # every layer's per_layer_input_gate and per_layer_projection (hidden x width each), post_per_layer_input_norm
    ple_lin, ple_other = (2 * d * _int(cfg, "hidden_size_per_layer_input"), d) if s.ple_params else (0, 0)
    lin_attn = attn
    if cfg.get("linear_num_value_heads"):  # gated DeltaNet (Qwen3-Next / Qwen3.5)
        kh, vh = _int(cfg, "linear_num_key_heads"), _int(cfg, "linear_num_value_heads")
        kd, vd = _int(cfg, "linear_key_head_dim"), _int(cfg, "linear_value_head_dim")
        conv = _int(cfg, "linear_conv_kernel_dim", default=4)
        s.linear_dims = (kh, kd, vh, vd, conv)
        lin_attn = (d * (2 * kh * kd + 2 * vh * vd) + d * 2 * vh + (2 * kh * kd + vh * vd) * conv
                    + 2 * vh + vd + vh * vd * d)
    gated = not s.arch.startswith(("gpt2", "gpt_neox", "falcon", "phi", "starcoder", "bloom", "opt")) or s.arch.startswith("phi3")
    mlp_mats = 3 if gated else 2
    llama4 = s.arch.startswith("llama4")
    # Llama 4: the dense layers' MLP is intermediate_size_mlp wide; every MoE layer adds a shared expert of
    # intermediate_size (transformers Llama4TextMoe.shared_expert, vLLM Llama4MoE)
    dense_mlp = mlp_mats * d * (_int(cfg, "intermediate_size_mlp", default=s.intermediate) if llama4 else s.intermediate)
    moe_mlp = routed = 0
    if s.n_experts:
        s.shared_intermediate = (_int(cfg, "n_shared_experts", default=0) * s.moe_intermediate
                                 + _int(cfg, "shared_expert_intermediate_size", default=0)
                                 + (s.moe_intermediate if llama4 else 0))
        shared = mlp_mats * d * s.shared_intermediate
        if s.arch.startswith("gemma4"):
            # Gemma 4's MoE block (enable_moe_block, 26B-A4B) runs next to the layer's dense MLP of intermediate_size
            # (experts.gate_up_proj 128 x 1408 x 2816, mlp.*_proj 2112 x 2816 in every layer): the MLP as a shared expert
            shared += dense_mlp
        routed = s.n_experts * mlp_mats * d * s.moe_intermediate
        moe_mlp = routed + shared
        router = s.n_experts * d + (d if _int(cfg, "shared_expert_intermediate_size") else 0)  # + shared expert gate
    first_dense = _int(cfg, "first_k_dense_replace", default=0)
    moe_every = max(_int(cfg, "moe_layer_freq", "decoder_sparse_step", "expert_interval", "expert_layer_period",
                         "interleave_moe_layer_step", default=1), 1)
    moe_list = cfg.get("moe_layers") if isinstance(cfg.get("moe_layers"), list) else None
    moe_offset = _int(cfg, "expert_layer_offset", default=None)
    norms_per_layer = (4 if s.arch.startswith(("gemma2", "gemma3", "gemma4")) else 2) * d
    linear = other = experts = 0
    s.vllm_qkv_slots = 0
    mamba2 = is_mamba2(s)
    s.layer_params, moe_layers = [], []
    for i, kind in enumerate(s.layer_kinds):
        before = linear + other
        if kind in (FULL, SLIDING):
            linear += attn_full if kind == FULL else attn
            if kind == FULL and gh and cfg.get("attention_k_eq_v"):  # vLLM's V slot (gemma4_ple.vllm_shared_kv_slots)
                s.vllm_qkv_slots += d * gkv * gh
            other += norms_full if kind == FULL else attn_norms
        elif kind == SHARED:
            q_o, q_norm = shared_layer_params(s, given[i], gh)
            linear, other = linear + q_o, other + q_norm
            s.vllm_qkv_slots += vllm_shared_kv_slots(s, given[i], gh, gkv)
        elif kind == MAMBA and mamba2:  # Granite 4.0-H: a Mamba-2 mixer beside the layer's MLP
            m_lin, m_other = mamba2_params(cfg, d)
            linear, other = linear + m_lin, other + m_other
        elif kind == MAMBA:
            linear += mamba_params(cfg, d)
        else:  # linear attention; without its fields, an attention layer's projection budget (approximation)
            linear += lin_attn
        if moe_offset is not None:  # Jamba: every period-th layer from offset
            is_moe = s.n_experts and i % moe_every == moe_offset
        elif moe_list is not None:  # Llama 4's explicit list
            is_moe = s.n_experts and i in moe_list
        elif "decoder_sparse_step" in cfg or llama4:  # Qwen MoE, Llama 4: layer i is sparse when (i + 1) % step == 0
            is_moe = s.n_experts and (i + 1) % moe_every == 0
        else:
            is_moe = s.n_experts and i >= first_dense and (i - first_dense) % moe_every == 0
        moe_layers.append(bool(is_moe))
        if is_moe:
            linear += moe_mlp
            experts += routed
            other += router
        elif kind == SHARED:
            linear += mlp_mats * d * mlp_width(cfg, s, i)
        else:
            linear += dense_mlp
        linear, other = linear + ple_lin, other + norms_per_layer + ple_other
        s.layer_params.append(linear + other - before)
    s.moe_layers = tuple(moe_layers) if s.n_experts else ()
    other += embed + head + d + s.ple_params
    return linear + other, linear, experts


# a Mamba-2 mixer's fields: Nemotron-H's names, then Granite 4.0-H's (transformers GraniteMoeHybridConfig: mamba_n_heads,
# mamba_d_head, mamba_n_groups, mamba_d_state, mamba_d_conv)
MAMBA2_KEYS = (("mamba_num_heads", "mamba_n_heads"), ("mamba_head_dim", "mamba_d_head"), ("n_groups", "mamba_n_groups"),
               ("ssm_state_size", "mamba_d_state"), ("conv_kernel", "mamba_d_conv"))


def is_mamba2(s: LLMSpec) -> bool:
    """Are this model's MAMBA layers Mamba-2 mixers (Nemotron-H; Granite 4.0-H, granitemoehybrid)?"""
    return MAMBA in s.layer_kinds and s.arch.startswith(("nemotron_h", "granitemoehybrid"))


def mamba2_dims(cfg: dict) -> tuple:
    """(heads, head dim, groups, d_state, conv kernel) of a Mamba-2 mixer (Nemotron-H, Granite 4.0-H); its inner width
    is heads x head dim (vLLM NemotronHMambaDecoderLayer: intermediate_size = mamba_num_heads * mamba_head_dim;
    transformers GraniteMoeHybridMambaLayer: intermediate_size = mamba_n_heads * mamba_d_head), not expand x hidden."""
    dims = tuple(_int(cfg, *keys) for keys in MAMBA2_KEYS)
    if any(v is None or not 1 <= v <= 1 << 16 for v in dims) or dims[0] % dims[2]:
        raise UserError(f"config Mamba-2 geometry mamba_num_heads / mamba_head_dim / n_groups / ssm_state_size / "
                        f"conv_kernel (Granite: mamba_n_heads / mamba_d_head / mamba_n_groups / mamba_d_state / "
                        f"mamba_d_conv) = {dims} is missing or not plausible (heads a multiple of groups)")
    return dims


def mamba2_params(cfg: dict, d: int) -> tuple:
    """(matmul, other) parameters of one Mamba-2 mixer: in_proj (z, x, B, C, dt) and out_proj; conv1d and its bias,
    dt_bias, A_log, D, the gated norm."""
    nh, hd, ng, ds, k = mamba2_dims(cfg)
    inner, conv_dim = nh * hd, nh * hd + 2 * ng * ds
    return d * (2 * inner + 2 * ng * ds + nh) + inner * d, conv_dim * (k + 1) + 3 * nh + inner


def nemotron_h_params(cfg: dict, s: LLMSpec) -> tuple:
    """Nemotron-H: each layer is one block, a Mamba-2 mixer, attention, an MLP (up and down, relu2) or a MoE block
    (routed experts of up and down, shared experts, a router with its correction bias), behind one norm.
    Nemotron 3 Super's latent MoE (moe_latent_size; vLLM nemotron_h.py NemotronHMoE use_latent_moe, llama.cpp
    LLM_ARCH_NEMOTRON_H_MOE moe_n_embd): the routed experts work at moe_latent_size instead of hidden_size, behind
    fc1_latent_proj (hidden -> latent) and fc2_latent_proj (latent -> hidden); the router and the shared experts stay
    at hidden_size."""
    d, V = s.hidden, s.vocab
    mamba_lin, mamba_other = mamba2_params(cfg, d)
    attn = d * s.n_heads * s.head_dim_k + 2 * d * s.n_kv_heads * s.head_dim_k + s.n_heads * s.head_dim_k * d
    s.shared_intermediate = _int(cfg, "n_shared_experts", default=1) * _int(cfg, "moe_shared_expert_intermediate_size",
                                                                              default=0)
    latent = _int(cfg, "moe_latent_size")
    if latent is not None and not 1 <= latent <= d:
        raise UserError(f"config moe_latent_size = {latent} is not a plausible latent width (1..hidden_size {d})")
    routed = s.n_experts * 2 * (latent or d) * s.moe_intermediate
    latent_proj = 2 * d * latent if latent else 0
    pattern = cfg["hybrid_override_pattern"]
    linear = other = experts = 0
    s.layer_params, moe = [], []
    for c in pattern:
        before = linear + other
        if c == "M":
            linear, other = linear + mamba_lin, other + mamba_other
        elif c == "*":
            linear += attn
        elif c == "-":
            linear += 2 * d * s.intermediate
        else:  # "E"
            if not s.n_experts:
                raise UserError("config hybrid_override_pattern has MoE layers ('E') but no n_routed_experts")
            linear += routed + 2 * d * s.shared_intermediate + latent_proj
            experts += routed
            other += s.n_experts * d + s.n_experts
        other += d
        moe.append(c == "E")
        s.layer_params.append(linear + other - before)
    s.moe_layers = tuple(moe) if s.n_experts else ()
    other += V * d * (1 if cfg.get("tie_word_embeddings") else 2) + d
    return linear + other, linear, experts


def mamba_params(cfg: dict, d: int) -> int:
    expand = _int(cfg, "mamba_expand", default=2)
    d_inner = expand * d
    d_state = _int(cfg, "mamba_d_state", "ssm_state_size", default=16)
    d_conv = _int(cfg, "mamba_d_conv", "conv_kernel", default=4)
    dt_rank = _int(cfg, "mamba_dt_rank", "time_step_rank", default=-(-d // 16))
    return (d * 2 * d_inner + d_inner * d_conv + d_inner * (dt_rank + 2 * d_state)
            + dt_rank * d_inner + d_inner * d_state + d_inner * d)


# (rev11 S2, rev12 S2) the chunk size a Mamba-2 config class gives when its config.json has none, read in transformers
# 5.25.0 (models/<arch>/configuration_<arch>.py): NemotronHConfig chunk_size = 128 (line 130; a config's mamba_chunk_size
# is popped into it, line 167); GraniteMoeHybridConfig mamba_chunk_size = 256 (line 102), BambaConfig mamba_chunk_size =
# 256 (line 81), FalconH1Config mamba_chunk_size = 256 (line 84), Mamba2Config chunk_size = 256 (line 87), Zamba2Config
# chunk_size = 256 (line 88); none of these sets it again in __post_init__. The Mamba-1 classes (MambaConfig, JambaConfig,
# FalconMambaConfig, ZambaConfig) have none. kv reads it only for the Mamba-2 layouts it sizes (is_mamba2: Nemotron-H,
# Granite 4.0-H); an arch without one stays refused in prefix caching's "all" mode
MAMBA2_CHUNK_DEFAULT = (("nemotron_h", 128), ("granitemoehybrid", 256), ("bamba", 256), ("falcon_h1", 256), ("mamba2", 256),
                        ("zamba2", 256))


def recurrent_state(cfg: dict, s: LLMSpec) -> int:
    """Fixed per-sequence state of non-attention layers (f32 in llama.cpp, model dtype in vLLM; f32 here)."""
    n_mamba = s.layer_kinds.count(MAMBA)
    n_lin = s.layer_kinds.count(LINEAR)
    total = 0
    if is_mamba2(s):
        # Mamba-2: llama.cpp keeps n_embd_r = (d_conv - 1) x (d_inner + 2 x n_group x d_state) conv values and
        # n_embd_s = d_state x d_inner SSM values a sequence and layer, both f32 (llama_memory_recurrent); vLLM's
        # MambaSpec pages the same shapes (mamba2_state_shape), the conv state in the model's dtype, the temporal state in
        # mamba_ssm_cache_dtype (NemotronHForCausalLMConfig: the config's, else float32). Granite 4.0-H has the same
        # mixer (granitemoehybrid); SGLang keeps its temporal state in --mamba-ssm-dtype (runtimes/sglang.py)
        nh, hd, ng, ds, k = mamba2_dims(cfg)
        conv, ssm = (k - 1) * (nh * hd + 2 * ng * ds), nh * hd * ds
        model_b = 4 if s.dtype == "fp32" else 2
        name = str(cfg.get("mamba_ssm_cache_dtype") or "float32").lower()
        if name not in SSM_CACHE_BYTES:
            raise UserError(f"config mamba_ssm_cache_dtype {name!r} is not one of {', '.join(SSM_CACHE_BYTES)}")
        ssm_b = SSM_CACHE_BYTES[name]
        s.linear_state = (conv, model_b, ssm, ssm_b)
        # vLLM ModelConfig.get_mamba_chunk_size reads the transformers config object, whose class fills in a chunk
        # size a config.json leaves out (rev11 S2): MAMBA2_CHUNK_DEFAULT
        chunk = next((c for a, c in MAMBA2_CHUNK_DEFAULT if s.arch.startswith(a)), 0)
        s.mamba_chunk = _int(cfg, "mamba_chunk_size", "chunk_size", default=chunk)
        return n_mamba * (conv + ssm) * 4
    if n_mamba:
        d_inner = _int(cfg, "mamba_expand", default=2) * s.hidden
        d_state = _int(cfg, "mamba_d_state", "ssm_state_size", default=16)
        d_conv = _int(cfg, "mamba_d_conv", "conv_kernel", default=4)
        total += n_mamba * d_inner * (d_state + d_conv - 1) * 4
    if n_lin:
        kh = _int(cfg, "linear_num_key_heads", default=s.n_heads)
        vh = _int(cfg, "linear_num_value_heads", default=s.n_heads)
        kd = _int(cfg, "linear_key_head_dim", default=s.head_dim_k)
        vd = _int(cfg, "linear_value_head_dim", default=s.head_dim_v)
        conv = _int(cfg, "linear_conv_kernel_dim", default=4)
        total += n_lin * (vh * kd * vd + (2 * kh * kd + vh * vd) * (conv - 1)) * 4
        if cfg.get("linear_num_value_heads"):
            # vLLM's MambaSpec for a gated-DeltaNet layer: the conv state in the model's dtype, the recurrent (ssm)
            # state in the config's mamba_ssm_dtype (Qwen 3.5+: float32; Qwen3-Next names none: the model's dtype)
            model_b = 4 if s.dtype == "fp32" else 2
            ssm_b = 4 if str(cfg.get("mamba_ssm_dtype") or "").lower() in ("float32", "fp32") else model_b
            s.linear_state = ((2 * kh * kd + vh * vd) * (conv - 1), model_b, vh * kd * vd, ssm_b)
    return total
