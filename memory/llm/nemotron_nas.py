"""NVIDIA's NAS-derived Llama-Nemotron (DeciLMForCausalLM, model_type nemotron-nas: Llama-3_3-Nemotron-Super-49B,
Llama-3_1-Nemotron-Ultra-253B, Llama-3_1-Nemotron-51B): a Llama decoder whose config.json block_configs give each layer
its own attention and FFN. spec.from_config calls read_blocks once and apply_blocks for the layer kinds and KV heads
(the blocks kept on the spec), params.count_params calls nas_params on those blocks for the weights.

Each block, as the runtimes build it:
  - attention: n_heads_in_group g -> num_attention_heads // g KV heads (vLLM nemotron_nas.py DeciLMDecoderLayer);
    no_op -> no attention, no cache; replace_with_linear -> one hidden x hidden matmul, no cache (llama.cpp's
    convert_hf_to_gguf DeciModel writes head_count_kv 0 for both, head_count 0 / num_attention_heads; its KV cache
    holds the layers with KV heads alone: 'size = 784.00 MiB (4096 cells, 80 layers ...)' for the 49B = 49 layers x
    8 heads x 128 x 2 x 2 bytes x 4096);
  - ffn: ffn_mult m -> a gated MLP of _find_multiple(int(2 m hidden / 3), 256) (vLLM and the converter alike), or its
    intermediate_size; no_op -> none (the Ultra's 'dummy' blocks: ffn_mult null); replace_with_linear -> one
    hidden x hidden matmul.
A block with attention has its input norm, a block with an FFN its post-attention norm (vLLM builds each only with
its sub-block)."""
from ..errors import UserError
from .spec import FFN, FULL, LLMSpec

NAS_TYPES = ("nemotron-nas", "deci", "decilm")
# block fields kv does not model: a window or sink tokens would change what the cache keeps, sparsify the weights
_UNREAD = (("attention", "window_length"), ("attention", "num_sink_tokens"), ("attention", "sparsify"),
           ("ffn", "sparsify"))


def is_nas(cfg: dict) -> bool:
    return str(cfg.get("model_type", "")) in NAS_TYPES or "block_configs" in cfg


def _ffn_width(mult: float, d: int) -> int:
    """DeciLM's _ffn_mult_to_intermediate_size: int(2 x ffn_mult x hidden / 3), up to a multiple of 256."""
    n = int(2 * mult * d / 3)
    return n if n % 256 == 0 else n + 256 - n % 256


def read_blocks(cfg: dict, n_layers: int, n_heads: int, d: int, name: str) -> list:
    """[(attention, kv_heads, ffn, width)] per layer: attention 'attn' | 'linear' | None, ffn 'mlp' | 'linear' | None."""
    blocks = cfg.get("block_configs")
    if not isinstance(blocks, list) or len(blocks) != n_layers:
        raise UserError(f"{name}: model_type {cfg.get('model_type')!r} needs block_configs with one entry for each of "
                        f"its {n_layers} layers (each layer's attention and FFN), got "
                        f"{len(blocks) if isinstance(blocks, list) else 'none'}")
    out = []
    for i, b in enumerate(blocks):
        a, f = (b or {}).get("attention"), (b or {}).get("ffn")
        if not isinstance(a, dict) or not isinstance(f, dict):
            raise UserError(f"{name}: block_configs[{i}] has no attention / ffn object")
        for part, key in _UNREAD:
            v = (a if part == "attention" else f).get(key)
            if v not in (None, False, 0):
                raise UserError(f"{name}: block_configs[{i}].{part}.{key} = {v!r} is not modelled (kv reads full "
                                "attention with its KV heads, or none, and dense FFN widths)")
        if a.get("no_op"):
            attn, kvh = None, 0
        elif a.get("replace_with_linear"):
            attn, kvh = "linear", 0
        else:
            g = a.get("n_heads_in_group")
            if isinstance(g, bool) or not isinstance(g, int) or g < 1 or n_heads % g:
                raise UserError(f"{name}: block_configs[{i}].attention.n_heads_in_group = {g!r} must divide "
                                f"num_attention_heads ({n_heads})")
            attn, kvh = "attn", n_heads // g
        if f.get("no_op"):
            ffn, width = None, 0
        elif f.get("replace_with_linear"):
            ffn, width = "linear", 0
        else:
            m, size = f.get("ffn_mult"), f.get("intermediate_size")
            if isinstance(m, (int, float)) and not isinstance(m, bool) and 0 < m <= 64:
                width = _ffn_width(m, d)
            elif isinstance(size, int) and not isinstance(size, bool) and 0 < size <= 1 << 20:
                width = size
            else:
                raise UserError(f"{name}: block_configs[{i}].ffn has neither a plausible ffn_mult nor intermediate_size "
                                f"(got {m!r} / {size!r}) and is not no_op")
            ffn = "mlp"
        out.append((attn, kvh, ffn, width))
    if not any(a == "attn" for a, *_ in out):
        raise UserError(f"{name}: block_configs give no layer attention with KV heads")
    return out


def apply_blocks(spec: LLMSpec, blocks: list) -> None:
    """Layer kinds (a layer without KV heads keeps no cache and no state: FFN) and KV heads; per-layer K+V widths only
    where attention layers differ in KV heads (the published checkpoints keep 8 in every attention layer)."""
    spec.nas_blocks = blocks  # params.count_params reads them, not block_configs again
    heads = [kvh for attn, kvh, _, _ in blocks if attn == "attn"]
    spec.layer_kinds = [FULL if attn == "attn" else FFN for attn, *_ in blocks]
    spec.n_kv_heads = max(heads)
    spec.intermediate = max(w for *_, w in blocks)
    if len(set(heads)) > 1:
        spec.layer_kv_heads = [kvh if attn == "attn" else spec.n_kv_heads for attn, kvh, _, _ in blocks]
        spec.layer_kv_elems = [kvh * (spec.head_dim_k + spec.head_dim_v) for _, kvh, _, _ in blocks]
    spec.notes.append(f"NAS layers (block_configs): {len(heads)} of {len(blocks)} layers keep K and V "
                      f"({', '.join(sorted({str(h) for h in heads}))} KV heads); the others have no attention or a "
                      "linear one")


def nas_params(cfg: dict, s: LLMSpec, blocks: list) -> tuple:
    """(total, matmul, routed experts) parameters, layer by layer (s.layer_params)."""
    d, H, hd = s.hidden, s.n_heads, s.head_dim_k
    bias = bool(cfg.get("attention_bias"))
    mlp_bias = bool(cfg.get("mlp_bias"))
    linear = other = 0
    s.layer_params = []
    for attn, kvh, ffn, width in blocks:
        before = linear + other
        if attn == "attn":
            linear += d * H * hd + 2 * d * kvh * hd + H * hd * d
            other += d + ((H * hd + 2 * kvh * hd + d) if bias else 0)
        elif attn == "linear":
            linear, other = linear + d * d, other + d
        if ffn == "mlp":
            linear += 3 * d * width
            other += d + ((2 * width + d) if mlp_bias else 0)
        elif ffn == "linear":
            linear, other = linear + d * d, other + d
        s.layer_params.append(linear + other - before)
    other += s.vocab * d * (1 if cfg.get("tie_word_embeddings") else 2) + d
    return linear + other, linear, 0
