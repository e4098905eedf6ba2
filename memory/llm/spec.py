"""What an LLM is, for memory purposes: layer kinds, attention geometry, parameter count and (when a
file is given) the exact weight bytes. Built from a Hugging Face config.json, GGUF metadata or
safetensors headers; the math lives in llm.py."""
import json
import math
import mmap
import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError

MODELS_DIR = Path(__file__).with_name("models")

FULL, SLIDING, LINEAR, MAMBA = "full", "sliding", "linear", "mamba"

_MAX_LAYERS = 1024
_MAX_DIM = 1 << 20
_MAX_VOCAB = 1 << 22


@dataclass
class LLMSpec:
    name: str
    arch: str
    layer_kinds: list              # one entry per decoder layer: full | sliding | linear | mamba
    hidden: int
    n_heads: int
    n_kv_heads: int
    head_dim_k: int
    head_dim_v: int
    vocab: int
    intermediate: int = 0
    max_ctx: int | None = None
    sliding_window: int | None = None
    kv_lora_rank: int = 0          # MLA (DeepSeek): the cache holds kv_lora_rank + qk_rope_head_dim per token
    qk_rope_head_dim: int = 0
    n_experts: int = 0
    n_experts_per_tok: int = 0
    moe_intermediate: int = 0
    params: int | None = None      # total parameters (all experts)
    linear_params: int | None = None  # parameters in decoder-block matmuls (what AWQ/GPTQ/fp8 quantize)
    weights_bytes: int | None = None  # exact, from a file
    weights_source: str = ""
    embed_bytes: int | None = None    # token embedding (llama.cpp keeps it in host RAM)
    output_bytes: int | None = None   # lm_head / output.weight
    tied: bool = False                # output head shares the embedding (llama.cpp still puts a copy on the GPU)
    dtype: str = "bf16"            # weight dtype the file or config names
    quant: str | None = None       # awq | gptq | fp8 | int8 | a GGUF type name
    recurrent_state_per_seq: int = 0  # bytes of fixed recurrent state per sequence (mamba / linear-attention layers)
    layer_kv_elems: list | None = None  # per-layer K+V elements per token when layers differ (GGUF per-layer heads)
    notes: list = field(default_factory=list)

    @property
    def n_layers(self) -> int:
        return len(self.layer_kinds)

    @property
    def attn_layers(self) -> int:
        return sum(k in (FULL, SLIDING) for k in self.layer_kinds)

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def kv_elems_per_token_layer(self) -> int:
        """Cache elements one token adds to one attention layer (K and V together)."""
        if self.mla:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return self.n_kv_heads * (self.head_dim_k + self.head_dim_v)

    def kv_elems_by_kind(self) -> dict:
        """{layer kind: K+V elements one token adds across all layers of that kind}."""
        per = self.layer_kv_elems or [self.kv_elems_per_token_layer()] * self.n_layers
        out = {FULL: 0, SLIDING: 0}
        for kind, e in zip(self.layer_kinds, per):
            if kind in out:
                out[kind] += e
        return out

    def summary(self) -> dict:
        kinds = {k: self.layer_kinds.count(k) for k in (FULL, SLIDING, LINEAR, MAMBA) if k in self.layer_kinds}
        return {"name": self.name, "arch": self.arch, "layers": self.n_layers, "attention_layers": self.attn_layers,
                "layer_kinds": kinds, "hidden": self.hidden, "heads": self.n_heads, "kv_heads": self.n_kv_heads,
                "head_dim": self.head_dim_k, "mla": {"kv_lora_rank": self.kv_lora_rank, "qk_rope_head_dim": self.qk_rope_head_dim} if self.mla else None,
                "sliding_window": self.sliding_window, "experts": self.n_experts or None, "vocab": self.vocab,
                "max_ctx": self.max_ctx, "params": self.params, "dtype": self.dtype, "quant": self.quant}


# ---------------------------------------------------------------- Hugging Face config.json

def _int(cfg, *keys, default=None):
    for k in keys:
        v = cfg.get(k)
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
                raise UserError(f"config field {k!r} must be a whole number, got {v!r}")
            return int(v)
    return default


def _need(cfg, name, *keys, lo=1, hi=_MAX_DIM):
    v = _int(cfg, *keys)
    if v is None:
        raise UserError(f"config has no {' / '.join(keys)} ({name}); is this an LLM config.json?")
    if not lo <= v <= hi:
        raise UserError(f"config field {keys[0]} = {v} is not a plausible {name} (expected {lo}..{hi})")
    return v


def _text_config(cfg: dict) -> dict:
    """Vision-language and wrapper configs keep the decoder in text_config / language_config / llm_config."""
    for key in ("text_config", "language_config", "llm_config"):
        sub = cfg.get(key)
        if isinstance(sub, dict) and ("num_hidden_layers" in sub or "hidden_size" in sub):
            merged = {k: v for k, v in cfg.items() if k not in (key, "vision_config")}
            merged.update(sub)
            merged.setdefault("_vision", "vision_config" in cfg)
            return merged
    return dict(cfg, _vision="vision_config" in cfg)


def _layer_kinds(cfg: dict, n_layers: int) -> list:
    lt = cfg.get("layer_types") or cfg.get("layers_block_type")
    if isinstance(lt, list) and lt:
        if len(lt) != n_layers:
            raise UserError(f"config layer_types has {len(lt)} entries for {n_layers} layers")
        out = []
        for t in lt:
            t = str(t).lower()
            if t in ("full_attention", "attention", "global", "full"):
                out.append(FULL)
            elif "sliding" in t or t in ("local", "chunked_attention"):
                out.append(SLIDING)
            elif "mamba" in t or t in ("ssm", "recurrent"):
                out.append(MAMBA)
            else:  # linear_attention (Qwen3-Next gated DeltaNet), conv, ...
                out.append(LINEAR)
        return out
    if cfg.get("attn_layer_period"):  # Jamba
        period, offset = int(cfg["attn_layer_period"]), int(cfg.get("attn_layer_offset", 0))
        return [FULL if i % period == offset else MAMBA for i in range(n_layers)]
    if cfg.get("full_attention_interval"):  # Qwen3-Next style without layer_types
        iv = int(cfg["full_attention_interval"])
        return [FULL if (i + 1) % iv == 0 else LINEAR for i in range(n_layers)]
    window = cfg.get("sliding_window")
    mt = str(cfg.get("model_type", ""))
    if window and mt.startswith("gemma2"):
        return [SLIDING if i % 2 == 0 else FULL for i in range(n_layers)]
    if window and mt.startswith("gemma3"):
        pattern = int(cfg.get("sliding_window_pattern") or 6)
        return [FULL if (i + 1) % pattern == 0 else SLIDING for i in range(n_layers)]
    # Phi-3's config names a 2047 window that the reference implementation ignores: counted as full attention
    if window and cfg.get("use_sliding_window", True) and mt in ("mistral", "mixtral", "starcoder2") \
            and window < (cfg.get("max_position_embeddings") or 1 << 30):
        return [SLIDING] * n_layers
    if window and cfg.get("use_sliding_window") and mt.startswith("qwen"):
        max_window_layers = int(cfg.get("max_window_layers", n_layers))
        return [FULL if i < max_window_layers else SLIDING for i in range(n_layers)]
    return [FULL] * n_layers


def from_config(cfg: dict, name: str = "config.json") -> LLMSpec:
    if not isinstance(cfg, dict):
        raise UserError(f"{name}: not a JSON object")
    cfg = _text_config(cfg)
    L = _need(cfg, "layer count", "num_hidden_layers", "n_layer", "num_layers", hi=_MAX_LAYERS)
    d = _need(cfg, "hidden size", "hidden_size", "n_embd", "d_model")
    H = _need(cfg, "attention head count", "num_attention_heads", "n_head", "num_heads", hi=4096)
    KV = _int(cfg, "num_key_value_heads", "n_head_kv", "num_kv_heads")
    if KV is None:
        KV = 1 if cfg.get("multi_query") else H
    if not 1 <= KV <= H:
        raise UserError(f"{name}: num_key_value_heads = {KV} must be between 1 and num_attention_heads ({H})")
    if H % KV:
        raise UserError(f"{name}: num_attention_heads ({H}) is not a multiple of num_key_value_heads ({KV})")
    hd = _int(cfg, "head_dim") or d // H
    if not 1 <= hd <= 4096:
        raise UserError(f"{name}: head_dim = {hd} is not plausible")
    V = _need(cfg, "vocabulary size", "vocab_size", "padded_vocab_size", hi=_MAX_VOCAB)
    ff = _int(cfg, "intermediate_size", "ffn_hidden_size", "n_inner", default=4 * d)
    kinds = _layer_kinds(cfg, L)
    mt = str(cfg.get("model_type", "unknown"))

    spec = LLMSpec(name=name, arch=mt, layer_kinds=kinds, hidden=d, n_heads=H, n_kv_heads=KV,
                   head_dim_k=hd, head_dim_v=hd, vocab=V, intermediate=ff,
                   max_ctx=_int(cfg, "max_position_embeddings", "n_positions", "seq_length", "max_seq_len"),
                   sliding_window=_int(cfg, "sliding_window") if SLIDING in kinds else None)
    if _int(cfg, "kv_lora_rank"):
        spec.kv_lora_rank = _need(cfg, "MLA kv_lora_rank", "kv_lora_rank", hi=65536)
        spec.qk_rope_head_dim = _need(cfg, "MLA rope dim", "qk_rope_head_dim", hi=4096)
        spec.head_dim_k = spec.kv_lora_rank + spec.qk_rope_head_dim
        spec.head_dim_v = spec.kv_lora_rank
        spec.n_kv_heads = 1
    spec.n_experts = _int(cfg, "n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts", default=0)
    if spec.n_experts:
        spec.n_experts_per_tok = _int(cfg, "num_experts_per_tok", "moe_top_k", "num_experts_per_token", default=2)
        spec.moe_intermediate = _int(cfg, "moe_intermediate_size", "expert_intermediate_size", default=ff)
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    spec.dtype = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype, dtype)
    q = cfg.get("quantization_config")
    if isinstance(q, dict):
        spec.quant = _quant_name(q)
    spec.tied = bool(cfg.get("tie_word_embeddings", False))
    spec.params, spec.linear_params = _count_params(cfg, spec)
    spec.recurrent_state_per_seq = _recurrent_state(cfg, spec)
    if cfg.get("_vision"):
        spec.notes.append("vision tower not counted: this is the text decoder only")
    if spec.params > 10 ** 13:
        raise UserError(f"{name}: {spec.params:.3g} parameters is not a plausible model")
    return spec


def _quant_name(q: dict) -> str | None:
    method = str(q.get("quant_method") or q.get("quant_type") or "").lower()
    bits = q.get("bits") or q.get("w_bit") or q.get("weight_bits")
    if method in ("awq", "gptq", "marlin", "gptq_marlin", "awq_marlin", "compressed-tensors", "autoround"):
        if method == "compressed-tensors":
            groups = q.get("config_groups") or {}
            for g in groups.values():
                w = (g or {}).get("weights") or {}
                if w.get("type") == "float" and w.get("num_bits") == 8:
                    return "fp8"
                if w.get("num_bits") == 8:
                    return "int8"
                if w.get("num_bits") == 4:
                    return "int4"
            return "int4"
        return ("awq" if "awq" in method else "gptq") if (bits or 4) == 4 else "int8"
    if method in ("fp8", "fbgemm_fp8", "modelopt"):
        return "fp8"
    if method in ("bitsandbytes",):
        return "bnb-4bit" if q.get("load_in_4bit") else "int8"
    if method == "mxfp4":
        return "mxfp4"
    return method or None


def _count_params(cfg: dict, s: LLMSpec) -> tuple:
    """Total parameters (all experts resident) and the share inside decoder-block matmuls."""
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
    else:
        hd, KV = s.head_dim_k, s.n_kv_heads
        gate = 2 if (cfg.get("attn_output_gate") or s.arch.startswith("qwen3_next")) else 1  # q_proj also emits a gate
        attn = d * H * hd * gate + 2 * d * KV * hd + H * hd * d
        attn_norms = (2 * hd if (s.arch.startswith(("qwen3", "gemma3", "olmo2"))) else 0)
        if bias:
            attn += H * hd + 2 * KV * hd
    lin_attn = attn
    if cfg.get("linear_num_value_heads"):  # gated DeltaNet (Qwen3-Next / Qwen3.5)
        kh, vh = _int(cfg, "linear_num_key_heads"), _int(cfg, "linear_num_value_heads")
        kd, vd = _int(cfg, "linear_key_head_dim"), _int(cfg, "linear_value_head_dim")
        conv = _int(cfg, "linear_conv_kernel_dim", default=4)
        lin_attn = (d * (2 * kh * kd + 2 * vh * vd) + d * 2 * vh + (2 * kh * kd + vh * vd) * conv
                    + 2 * vh + vd + vh * vd * d)
    gated = not s.arch.startswith(("gpt2", "gpt_neox", "falcon", "phi", "starcoder", "bloom", "opt")) or s.arch.startswith("phi3")
    mlp_mats = 3 if gated else 2
    dense_mlp = mlp_mats * d * s.intermediate
    moe_mlp = 0
    if s.n_experts:
        shared = _int(cfg, "n_shared_experts", default=0) * s.moe_intermediate * mlp_mats * d
        shared += mlp_mats * d * _int(cfg, "shared_expert_intermediate_size", default=0)
        moe_mlp = s.n_experts * mlp_mats * d * s.moe_intermediate + shared
        router = s.n_experts * d + (d if _int(cfg, "shared_expert_intermediate_size") else 0)  # + shared expert gate
    first_dense = _int(cfg, "first_k_dense_replace", default=0)
    moe_every = max(_int(cfg, "moe_layer_freq", "decoder_sparse_step", "expert_interval", "expert_layer_period", default=1), 1)
    moe_offset = _int(cfg, "expert_layer_offset", default=None)
    norms_per_layer = (4 if s.arch.startswith(("gemma2", "gemma3")) else 2) * d
    linear = other = 0
    for i, kind in enumerate(s.layer_kinds):
        if kind in (FULL, SLIDING):
            linear += attn
            other += attn_norms
        elif kind == MAMBA:
            linear += _mamba_params(cfg, d)
        else:  # linear attention; without its fields, an attention layer's projection budget (approximation)
            linear += lin_attn
        if moe_offset is not None:  # Jamba: every period-th layer from offset
            is_moe = s.n_experts and i % moe_every == moe_offset
        elif "decoder_sparse_step" in cfg:  # Qwen MoE: layer i is sparse when (i + 1) % step == 0
            is_moe = s.n_experts and (i + 1) % moe_every == 0
        else:
            is_moe = s.n_experts and i >= first_dense and (i - first_dense) % moe_every == 0
        if is_moe:
            linear += moe_mlp
            other += router
        else:
            linear += dense_mlp
        other += norms_per_layer
    other += embed + head + d
    return linear + other, linear


def _mamba_params(cfg: dict, d: int) -> int:
    expand = _int(cfg, "mamba_expand", default=2)
    d_inner = expand * d
    d_state = _int(cfg, "mamba_d_state", "ssm_state_size", default=16)
    d_conv = _int(cfg, "mamba_d_conv", "conv_kernel", default=4)
    dt_rank = _int(cfg, "mamba_dt_rank", "time_step_rank", default=-(-d // 16))
    return (d * 2 * d_inner + d_inner * d_conv + d_inner * (dt_rank + 2 * d_state)
            + dt_rank * d_inner + d_inner * d_state + d_inner * d)


def _recurrent_state(cfg: dict, s: LLMSpec) -> int:
    """Fixed per-sequence state of non-attention layers (f32 in llama.cpp, model dtype in vLLM; f32 here)."""
    n_mamba = s.layer_kinds.count(MAMBA)
    n_lin = s.layer_kinds.count(LINEAR)
    total = 0
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
    return total


def load_config(path: str) -> LLMSpec:
    """A config.json, a model folder (config.json, else its safetensors headers) or one .safetensors file."""
    p = Path(path)
    if p.is_dir():
        if not (p / "config.json").exists() and list(p.glob("*.safetensors")):
            return load_safetensors(sorted(p.glob("*.safetensors")), name=p.name)
        p = p / "config.json"
    elif p.suffix == ".safetensors":
        return load_safetensors([p], name=p.stem)
    try:
        cfg = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable JSON config ({exc})") from None
    spec = from_config(cfg, name=p.parent.name or p.name)
    exact = weights_next_to(p.parent)
    if exact:
        spec.weights_bytes, spec.weights_source = exact
    return spec


# ---------------------------------------------------------------- safetensors (exact weight bytes)

def weights_next_to(folder: Path):
    """Exact weight bytes from the checkpoint beside a config.json: the index's total_size, else the headers."""
    for idx in sorted(folder.glob("*.safetensors.index.json")):
        try:
            total = json.loads(idx.read_text())["metadata"]["total_size"]
            return int(total), idx.name
        except (OSError, KeyError, ValueError, TypeError):
            continue
    files = sorted(folder.glob("*.safetensors"))
    if files:
        from ..estimate import headers
        return sum(headers.table_bytes(headers.read_safetensors(f)) for f in files), f"{len(files)} safetensors file(s)"
    return None


_LAYER = re.compile(r"(?:^|\.)(?:layers|h|blocks)\.(\d+)\.")


def load_safetensors(files, name="model") -> LLMSpec:
    """Describe a decoder from its tensor table alone (no config.json): layer count, per-layer K/V widths from
    the k/v projections, MLA from kv_a_proj_with_mqa, experts by count. Head size is taken from q_norm when the
    model has one, else 128; sliding windows cannot be seen in a header, so every layer counts as full."""
    from ..estimate import headers
    table = {}
    for f in files:
        table.update(headers.read_safetensors(f))
    return from_tensor_table(table, name=name)


def from_tensor_table(table: dict, name="model") -> LLMSpec:
    """table: {tensor name: (dtype, shape)} in PyTorch order (as memory/headers.py reads it)."""
    from ..estimate import headers
    layers = {}
    for t, (dt, shape) in table.items():
        m = _LAYER.search(t)
        if m:
            layers.setdefault(int(m.group(1)), {})[t[m.end():]] = shape
    embed = next((shape for t, (dt, shape) in table.items() if t.endswith(("embed_tokens.weight", "wte.weight", "tok_embeddings.weight"))), None)
    if not layers or embed is None or len(embed) != 2:
        raise UserError(f"{name}: no decoder layers or token embedding in the safetensors header; pass its config.json")
    L = max(layers) + 1
    if L > _MAX_LAYERS:
        raise UserError(f"{name}: {L} layers is not plausible")
    V, d = int(embed[0]), int(embed[1])

    def find(t, *suffixes):
        return next((sh for k, sh in t.items() if k.endswith(suffixes)), None)

    kinds, per_layer, hd, H, kv_heads, ff, experts, mla = [], [], None, 0, 0, 0, 0, None
    for i in range(L):
        t = layers.get(i, {})
        k, v = find(t, "attn.k_proj.weight", "attention.k_proj.weight"), find(t, "attn.v_proj.weight", "attention.v_proj.weight")
        kv_a = find(t, "kv_a_proj_with_mqa.weight")
        if kv_a is not None:
            rank = find(t, "kv_a_layernorm.weight")
            mla = (int(rank[0]), int(kv_a[0]) - int(rank[0])) if rank else (int(kv_a[0]) - 64, 64)
            kinds.append(FULL)
            per_layer.append(sum(mla))
        elif k is not None and v is not None:
            kinds.append(FULL)
            per_layer.append(int(k[0]) + int(v[0]))
            qn = find(t, "q_norm.weight")
            hd = hd or (int(qn[0]) if qn else 128)
            q = find(t, "attn.q_proj.weight", "attention.q_proj.weight")
            H = max(H, int(q[0]) // hd if q else 0)
            kv_heads = max(kv_heads, int(k[0]) // hd)
        elif any("mixer" in x or "mamba" in x or "ssm" in x for x in t):
            kinds.append(MAMBA)
            per_layer.append(0)
        else:
            kinds.append(LINEAR)
            per_layer.append(0)
        g = find(t, "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.fc1.weight")
        ff = max(ff, int(g[0]) if g else 0)
        experts = max(experts, len({x.split("experts.")[1].split(".")[0] for x in t if "experts." in x
                                    and x.split("experts.")[1].split(".")[0].isdigit()}))
    if not any(per_layer):
        raise UserError(f"{name}: no separate k_proj/v_proj tensors (fused QKV?); pass the model's config.json")
    dtypes = {}
    for dt, shape in table.values():
        dtypes[dt] = dtypes.get(dt, 0) + math.prod(shape)
    main = max(dtypes, key=dtypes.get)
    hd = hd or 128
    spec = LLMSpec(name=name, arch="safetensors", layer_kinds=kinds, hidden=d, n_heads=max(H, 1),
                   n_kv_heads=max(kv_heads, 1), head_dim_k=hd, head_dim_v=hd, vocab=V, intermediate=ff,
                   n_experts=experts, dtype={"BF16": "bf16", "F16": "fp16", "F32": "fp32"}.get(main, main.lower()))
    if mla:
        spec.kv_lora_rank, spec.qk_rope_head_dim, spec.n_kv_heads = mla[0], mla[1], 1
    else:
        spec.layer_kv_elems = per_layer  # exact K+V widths, whatever the head split
    if main in ("F8_E4M3", "F8_E5M2"):
        spec.quant = "fp8"
    spec.params = sum(math.prod(shape) for dt, shape in table.values())
    spec.linear_params = sum(math.prod(shape) for t, (dt, shape) in table.items() if _LAYER.search(t) and len(shape) == 2)
    spec.weights_bytes = headers.table_bytes(table)
    spec.weights_source = "safetensors headers"
    spec.tied = not any(t.endswith("lm_head.weight") for t in table)
    spec.notes.append("described from tensor shapes alone: sliding windows and the context limit are not in a header")
    return spec


# ---------------------------------------------------------------- GGUF

def load_gguf(path: str) -> LLMSpec:
    """Architecture from the GGUF metadata, exact weight bytes from its tensor table. Both are parsed straight
    from a memory map: the gguf package's reader builds a numpy view per vocabulary string and takes ~20 s
    on a 262k-token Gemma-3 vocabulary; this takes a fraction of a second and needs no optional package."""
    meta, tensors = read_gguf(path)
    return from_gguf_metadata(meta, tensors, name=os.path.basename(path))


# GGUF metadata value types -> struct format; 8 is a string, 9 an array
_GGUF_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_MAX_ARRAY_KEEP = 4096  # per-layer arrays are kept; longer ones (vocabularies, merges) are only counted


def read_gguf(path) -> tuple:
    """(metadata, tensors): GGUF key -> value for general.* and architecture keys (tokenizer.ggml.tokens becomes
    its length), and tensor name -> (bytes, GGML type name, elements)."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return _parse_gguf(mm)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (ValueError, OSError, struct.error, UnicodeDecodeError, IndexError, KeyError) as exc:
        raise UserError(f"{path}: not a readable GGUF file ({type(exc).__name__}: {exc})") from None


def _parse_gguf(mm) -> tuple:
    from ..estimate.headers import GGML_BLOCKS, GGML_TYPE_IDS
    size = len(mm)
    if size < 24 or mm[:4] != b"GGUF":
        raise ValueError("no GGUF magic")
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", mm, 4)
    if version < 2 or n_kv > 1 << 20 or n_tensors > 1 << 24:
        raise ValueError(f"version {version}, {n_kv} keys, {n_tensors} tensors")
    pos = 24

    def take(fmt):
        nonlocal pos
        n = struct.calcsize(fmt)
        if pos + n > size:
            raise ValueError(f"runs past the end of the file at byte {pos}")
        v = struct.unpack_from(fmt, mm, pos)
        pos += n
        return v

    def string(keep=True):
        nonlocal pos
        (n,) = take("<Q")
        if pos + n > size:
            raise ValueError(f"string of {n} bytes at byte {pos}")
        out = bytes(mm[pos:pos + n]).decode("utf-8") if keep else None
        pos += n
        return out

    def value(vt, keep):
        nonlocal pos
        if vt in _GGUF_SCALAR:
            return take("<" + _GGUF_SCALAR[vt])[0]
        if vt == 8:
            return string(keep)
        if vt == 9:
            et, count = take("<IQ")
            if count > size:
                raise ValueError(f"array of {count} items")
            if et in _GGUF_SCALAR:
                fmt = _GGUF_SCALAR[et]
                if keep and count <= _MAX_ARRAY_KEEP:
                    return list(take(f"<{count}{fmt}"))
                pos += struct.calcsize(fmt) * count
                return count
            if et == 8 and not (keep and count <= _MAX_ARRAY_KEEP):  # skip a vocabulary without decoding it
                unpack, p = struct.unpack_from, pos
                for _ in range(count):
                    p += 8 + unpack("<Q", mm, p)[0]
                if p > size:
                    raise ValueError("string array runs past the end of the file")
                pos = p
                return count
            items = [value(et, keep and count <= _MAX_ARRAY_KEEP) for _ in range(count)]
            return items if keep and count <= _MAX_ARRAY_KEEP else count
        raise ValueError(f"unknown metadata type {vt}")

    meta = {}
    arch = None
    for _ in range(n_kv):
        key = string()
        (vt,) = take("<I")
        keep = key.startswith("general.") or (arch is not None and key.startswith(arch + ".")) or arch is None
        v = value(vt, keep and not key.startswith("tokenizer."))
        if key == "tokenizer.ggml.tokens":
            meta["tokenizer.ggml.vocab_len"] = v if isinstance(v, int) else len(v)
        elif keep and not key.startswith("tokenizer."):
            meta[key] = v
            if key == "general.architecture":
                arch = v
    tensors, end = {}, 0
    for _ in range(n_tensors):
        name = string()
        (nd,) = take("<I")
        if nd > 8:
            raise ValueError(f"tensor {name!r} has {nd} dimensions")
        dims = take(f"<{nd}Q")
        qt, off = take("<IQ")
        tname = GGML_TYPE_IDS.get(qt)
        if tname not in GGML_BLOCKS:
            raise ValueError(f"tensor {name!r} has unknown GGML type {qt}")
        per_block, block_bytes = GGML_BLOCKS[tname]
        n = math.prod(dims)
        nbytes = n // per_block * block_bytes
        tensors[name] = (nbytes, tname, n)
        end = max(end, off + nbytes)
    align = meta.get("general.alignment", 32)
    if -(-pos // align) * align + end > size:
        raise ValueError("tensor data runs past the end of the file (truncated download?)")
    return meta, tensors


_GGUF_FTYPE = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
               12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K",
               19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL",
               26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
               36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4"}


def from_gguf_metadata(meta: dict, tensors: dict | None = None, name: str = "model.gguf") -> LLMSpec:
    """meta: GGUF key -> value; tensors: name -> (n_bytes, type name, n_elements). Separated from the reader for tests."""
    arch = meta.get("general.architecture")
    if not arch:
        raise UserError(f"{name}: GGUF has no general.architecture")

    def g(key, default=None):
        return meta.get(f"{arch}.{key}", default)

    L = g("block_count")
    d = g("embedding_length")
    H = g("attention.head_count")
    if not L or not d or not H:
        raise UserError(f"{name}: GGUF lacks {arch}.block_count / embedding_length / attention.head_count")
    L = int(L)
    heads = H if isinstance(H, list) else [H] * L
    kv = g("attention.head_count_kv", heads)
    kv = kv if isinstance(kv, list) else [kv] * L
    if len(kv) != L or len(heads) != L:
        raise UserError(f"{name}: per-layer head counts do not match {L} layers")
    Hmax = max(int(h) for h in heads)
    if Hmax <= 0:
        raise UserError(f"{name}: attention.head_count is zero")
    hd_k = int(g("attention.key_length") or d // Hmax)
    hd_v = int(g("attention.value_length") or hd_k)
    hd_k_swa = int(g("attention.key_length_swa") or hd_k)
    hd_v_swa = int(g("attention.value_length_swa") or hd_v)
    window = g("attention.sliding_window")
    kinds = []
    swa_pattern = g("attention.sliding_window_pattern")
    for i in range(L):
        if int(kv[i]) == 0 or int(heads[i]) == 0:
            kinds.append(MAMBA if g("ssm.state_size") else LINEAR)
        elif window and isinstance(swa_pattern, list) and i < len(swa_pattern):
            kinds.append(SLIDING if swa_pattern[i] else FULL)
        elif window and arch in ("gemma2",):
            kinds.append(SLIDING if i % 2 == 0 else FULL)
        elif window and arch in ("gemma3", "gemma3n", "gemma4"):
            kinds.append(FULL if (i + 1) % 6 == 0 else SLIDING)
        elif window and arch in ("starcoder2", "cohere2"):
            kinds.append(SLIDING)
        else:
            kinds.append(FULL)
    per_layer = [int(kv[i]) * ((hd_k_swa + hd_v_swa) if kinds[i] == SLIDING else (hd_k + hd_v)) for i in range(L)]
    kv_nonzero = [int(x) for x in kv if int(x)]
    vocab = meta.get("tokenizer.ggml.tokens")
    V = len(vocab) if isinstance(vocab, list) else int(meta.get("tokenizer.ggml.vocab_len") or g("vocab_size") or 0)
    ff = g("feed_forward_length", 0)
    ff = max(ff) if isinstance(ff, list) else int(ff or 0)
    spec = LLMSpec(name=name, arch=arch, layer_kinds=kinds, hidden=int(d), n_heads=Hmax,
                   n_kv_heads=max(kv_nonzero) if kv_nonzero else 0, head_dim_k=hd_k, head_dim_v=hd_v,
                   vocab=V, intermediate=ff, max_ctx=int(g("context_length") or 0) or None,
                   sliding_window=int(window) if window and SLIDING in kinds else None)
    if len(set(e for e, k in zip(per_layer, kinds) if k in (FULL, SLIDING))) > 1:
        spec.layer_kv_elems = per_layer
    if g("attention.kv_lora_rank"):
        spec.kv_lora_rank = int(g("attention.kv_lora_rank"))
        spec.qk_rope_head_dim = int(g("rope.dimension_count") or 64)
        spec.n_kv_heads = 1
        spec.layer_kv_elems = None
    spec.n_experts = int(g("expert_count") or 0)
    spec.n_experts_per_tok = int(g("expert_used_count") or 0)
    spec.moe_intermediate = int(g("expert_feed_forward_length") or 0)
    ft = meta.get("general.file_type")
    spec.quant = _GGUF_FTYPE.get(int(ft)) if ft is not None else None
    spec.dtype = spec.quant or "gguf"
    if tensors:
        spec.weights_bytes = sum(t[0] for t in tensors.values())
        spec.weights_source = "GGUF tensor table"
        spec.embed_bytes = tensors.get("token_embd.weight", (0,))[0]
        spec.tied = "output.weight" not in tensors
        spec.output_bytes = tensors.get("output.weight", (spec.embed_bytes,))[0]
        spec.params = sum(t[2] for t in tensors.values() if len(t) > 2) or None
        spec.linear_params = sum(t[2] for n, t in tensors.items() if len(t) > 2 and n.startswith("blk.") and n.endswith(".weight") and "norm" not in n) or None
    if not spec.attn_layers:
        raise UserError(f"{name}: no attention layers found (head_count_kv is zero everywhere)")
    if g("ssm.state_size") and MAMBA in kinds:
        d_inner = int(g("ssm.inner_size") or 2 * d)
        spec.recurrent_state_per_seq = kinds.count(MAMBA) * d_inner * (int(g("ssm.state_size")) + int(g("ssm.conv_kernel") or 4) - 1) * 4
    return spec


# ---------------------------------------------------------------- built-in descriptions

def _canonical(name: str) -> str:
    """'meta-llama/Meta-Llama-3.1-8B-Instruct' and 'llama-3.1-8b' name the same architecture."""
    n = name.strip().split("/")[-1].lower().replace("_", "-")
    n = n.removeprefix("meta-")
    for suffix in ("-instruct", "-it", "-chat", "-hf", "-base", "-fp8", "-awq", "-gptq", "-gguf"):
        n = n.replace(suffix, "")
    n = n.replace("phi-3-mini-4k", "phi-3-mini").replace("phi-3-mini", "phi-3-mini-4k")
    return n


def builtin_names() -> list:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def load_builtin(name: str) -> LLMSpec:
    names = builtin_names()
    wanted = _canonical(name)
    unversioned = re.sub(r"-v\d+(\.\d+)*$", "", wanted)
    for n in sorted(names, key=lambda n: _canonical(n) != wanted):
        if _canonical(n) in (wanted, unversioned):
            cfg = json.loads((MODELS_DIR / f"{n}.json").read_text(encoding="utf-8"))
            cfg.pop("_source", None)
            spec = from_config(cfg, name=n)
            low = name.lower()
            for tag, quant in (("awq", "awq"), ("gptq", "gptq"), ("fp8", "fp8"), ("int8", "int8"), ("w8a8", "int8")):
                if re.search(rf"[-_.]{tag}\b", low):
                    spec.quant = quant
                    spec.notes.append(f"weights taken as {quant} from the name {name!r}")
            return spec
    close = [n for n in names if wanted.split("-")[0] in n.lower()]
    hint = f" (close: {', '.join(close[:6])})" if close else ""
    raise UserError(f"unknown model {name!r}{hint}; `gpu-garden kv --model list` shows the built-in names")
