"""Model descriptions read from files: a config.json (with exact weight bytes from the checkpoint beside it),
a model folder, or safetensors headers alone."""
import json
import math
import re
from pathlib import Path

from ..errors import UserError
from .spec import _MAX_LAYERS, FULL, LINEAR, MAMBA, LLMSpec, from_config


def read_config(path, missing: str | None = None) -> tuple:
    """(the JSON object, its file) of a config.json given as the file or as the folder holding it: the one reader of a
    model's config.json, the target's (load_config) and a speculative drafter's (runtimes/vllm_drafter.py). `missing`:
    the message for a path with no such file (else "PATH: no such file")."""
    p = Path(path)
    if p.is_dir():
        p = p / "config.json"
    try:
        cfg = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(missing or f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not a readable JSON config ({exc})") from None
    if not isinstance(cfg, dict):
        raise UserError(f"{path}: not a JSON object")
    return cfg, p


def load_config(path: str) -> LLMSpec:
    """A config.json, a model folder (config.json, else its safetensors headers) or one .safetensors file."""
    p = Path(path)
    if p.is_dir() and not (p / "config.json").exists():
        if list(p.glob("*.safetensors")):
            return load_safetensors(sorted(p.glob("*.safetensors")), name=p.name)
        raise UserError(f"{path}: a folder with neither config.json nor .safetensors files (give the model's "
                        f"folder, its config.json, or a GGUF with --gguf FILE)")
    if p.suffix == ".safetensors" and not p.is_dir():
        return load_safetensors([p], name=p.stem)
    cfg, p = read_config(path)
    spec = from_config(cfg, name=p.parent.name or p.name)
    exact = weights_next_to(p.parent, spec.n_layers)
    if exact:
        size, source, skipped = exact
        if size is not None:
            spec.weights_bytes, spec.weights_source = size, source
        if skipped:
            spec.notes.append(f"skipped {len(skipped)} .safetensors file(s) beside the config: {', '.join(skipped[:4])}"
                              + (" ..." if len(skipped) > 4 else "") + f" ({'not named by the index' if 'index' in source else 'no decoder tensors of this model'}): not counted")
    return spec


# ---------------------------------------------------------------- safetensors (exact weight bytes)

# a decoder's tensor names: its layers (model.layers.N., transformer.h.N., model.language_model.layers.N.,
# thinker.model.layers.N.) or its token table / head, at most three names deep; another model's file (an SDXL
# checkpoint: model.diffusion_model..., conditioner.embedders.0.transformer.text_model.encoder.layers.N.) has none
_DECODER_TENSOR = re.compile(r"^(?:[A-Za-z_]\w*\.){0,3}(?:(?:layers|h|blocks)\.(\d+)\.|(?:embed_tokens|wte|tok_embeddings|lm_head)\.)")


def _is_decoder_file(table: dict, n_layers: int) -> bool:
    if any(".lora_" in t for t in table):  # a PEFT adapter (base_model.model.model.layers.N....lora_A.weight)
        return False
    for t in table:
        m = _DECODER_TENSOR.match(t)
        if m and (m.group(1) is None or int(m.group(1)) < n_layers):
            return True
    return False


def weights_next_to(folder: Path, n_layers: int = _MAX_LAYERS):
    """Exact weight bytes from the checkpoint beside a config.json: (bytes, which files, skipped file names).
    With an index (*.safetensors.index.json), the files its weight_map names (its total_size when stated); without
    one, the .safetensors files whose tensors are this decoder's (layer indices below n_layers). Other files in
    the folder (another model's checkpoint, a LoRA) are skipped and named, never counted."""
    from ..estimate import headers
    files = sorted(folder.glob("*.safetensors"))
    for idx in sorted(folder.glob("*.safetensors.index.json"), key=lambda f: f.name != "model.safetensors.index.json"):
        try:
            index = json.loads(idx.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        if not isinstance(index, dict):
            continue
        wmap = index.get("weight_map")
        named = sorted({str(v) for v in wmap.values()}) if isinstance(wmap, dict) else None
        skipped = [f.name for f in files if named is not None and f.name not in named]
        total = (index.get("metadata") or {}).get("total_size") if isinstance(index.get("metadata"), dict) else None
        if isinstance(total, (int, float)) and not isinstance(total, bool) and total > 0:
            return int(total), f"{idx.name} total_size", skipped
        present = [folder / n for n in (named or ()) if (folder / n).is_file()]
        if present and len(present) == len(named):
            return (sum(headers.table_bytes(headers.read_safetensors(f)) for f in present),
                    f"{idx.name}: {len(present)} file(s) it names", skipped)
    used, skipped = [], []
    total = 0
    for f in files:
        table = headers.read_safetensors(f)
        if _is_decoder_file(table, n_layers):
            used.append(f.name)
            total += headers.table_bytes(table)
        else:
            skipped.append(f.name)
    if used:
        return total, ", ".join(used[:4]) + (f" (+{len(used) - 4} more)" if len(used) > 4 else ""), skipped
    return (None, "", skipped) if skipped else None


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
    # the decoder's layers sit under the prefix of its token table (model.embed_tokens / model.layers.N., transformer.wte
    # / transformer.h.N.): a folder of a diffusion model's files held a CLIP's text_model.encoder.layers.N. and a T5's
    # encoder.embed_tokens, planned together as one 12-layer LLM
    by_prefix = {}
    for t, (dt, shape) in table.items():
        m = _LAYER.search(t)
        if m:
            by_prefix.setdefault(t[:m.start() + (t[m.start()] == ".")], {}).setdefault(int(m.group(1)), {})[t[m.end():]] = shape
    embeds = {t[:-len(suffix)]: (t, shape) for t, (dt, shape) in table.items() if len(shape) == 2
              for suffix in ("embed_tokens.weight", "wte.weight", "tok_embeddings.weight") if t.endswith(suffix)}
    prefix = next((p for p in embeds if p in by_prefix), None)
    if prefix is None:
        if by_prefix and embeds:
            layer = next(t for t in table if _LAYER.search(t))
            raise UserError(f"{name}: no LLM decoder here: the token table ({next(iter(embeds.values()))[0]}) and the layers "
                            f"({layer[:_LAYER.search(layer).start(1)]}N.) are different models' (a text encoder's, a diffusion model's); "
                            "give an LLM's folder or config.json (a diffusion model's files go to gpu-garden estimate FILE)")
        raise UserError(f"{name}: no decoder layers or token embedding in the safetensors header; pass its config.json "
                        f"(a diffusion model's file goes to gpu-garden estimate FILE)")
    layers, embed = by_prefix[prefix], embeds[prefix][1]
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
