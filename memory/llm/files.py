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
    _refuse_gguf(p if not p.is_dir() else p / "config.json", path)
    cfg, p = read_config(path)
    spec = from_config(cfg, name=p.parent.name or p.name)
    exact = weights_next_to(p.parent, spec.n_layers, _params_span(spec), _packing(cfg))
    if exact:
        size, source, skipped = exact
        if size is not None:
            spec.weights_bytes, spec.weights_source = size, source
        if skipped:
            why = "not named by the index" if "index" in source else "no decoder tensors of this model"
            spec.notes.append(f"skipped {len(skipped)} .safetensors file(s) beside the config: "
                              + ", ".join(n if isinstance(n, str) else f"{n[0]} ({n[1]})" for n in skipped[:4])
                              + (" ..." if len(skipped) > 4 else "")
                              + (f" ({why})" if any(isinstance(n, str) for n in skipped) else "") + ": not counted")
    return spec


def _refuse_gguf(p: Path, given) -> None:
    """A GGUF file given to --config (by its name or its magic): say which option reads it (ux50 D)."""
    try:
        magic = p.open("rb").read(4) if p.is_file() else b""
    except OSError:
        magic = b""
    if p.suffix.lower() == ".gguf" or magic == b"GGUF":
        raise UserError(f"{given}: a GGUF file: give it with --gguf FILE (--config takes a config.json, a model folder "
                        "or a .safetensors file)")


# A checkpoint beside a config.json counts as its weights only where its parameters are the config's within this
# ratio either way (ux50 S8: a CLIP-L model.safetensors, 0.12 B, beside Qwen2.5-7B's 7.62 B was read as exact); a 2x
# error (another size of the family) falls outside it. Packed integer tensors count the weights they hold (_packing).
PARAMS_RATIO = 1.5


def _packing(cfg: dict) -> dict:
    """Weights one stored element holds, by safetensors dtype, for the config's quantization: a GPTQ/AWQ/compressed-
    tensors int4 checkpoint packs 32 / bits into each I32 (qweight, weight_packed), an FP4 one (NVFP4, MXFP4) two into
    each U8; an unquantized config none."""
    q = cfg.get("quantization_config") or (cfg.get("text_config") or {}).get("quantization_config")
    if not isinstance(q, dict):
        return {}
    bits = q.get("bits") or q.get("w_bit") or q.get("weight_bits")
    for group in (q.get("config_groups") or {}).values() if isinstance(q.get("config_groups"), dict) else ():
        w = group.get("weights") if isinstance(group, dict) else None
        bits = bits or (w.get("num_bits") if isinstance(w, dict) else None)
    bits = bits if isinstance(bits, int) and not isinstance(bits, bool) and 1 <= bits <= 16 else 4
    fp4 = "fp4" in json.dumps(q).lower()
    return {"I32": 32 // bits, "U32": 32 // bits, **({"U8": 2, "I8": 2} if fp4 or bits == 4 else {})}


def _params_mismatch(table: dict, params, packing: dict) -> str | None:
    """Why a file's tensors are not the config's model (its parameters off by more than PARAMS_RATIO), or None.
    params: the decoder's count, or (decoder, with what its checkpoint stores beside it) as _params_span gives them."""
    low, high = params if isinstance(params, tuple) else (params, params)
    if not low:
        return None
    held = sum(math.prod(shape) * packing.get(dt, 1) for dt, shape in table.values())
    if low / PARAMS_RATIO <= held <= high * PARAMS_RATIO:
        return None
    return (f"{held / 1e9:.2f} B parameters, not the config's {low / 1e9:.2f} B"
            + (f" ({high / 1e9:.2f} B with its vision tower and MTP layers)" if high != low else ""))


def _params_span(spec: LLMSpec):
    """The parameters a checkpoint of this config may hold: the decoder's (spec.params, which leaves out a vision tower
    and a multi-token-prediction module) up to the decoder with them, the tower as runtimes/ollama.projector describes
    it, the MTP module as spec describes it (Qwen 3.5's mtp.*, a DeepSeek/GLM-style trailing layer). A vision-language
    checkpoint holds its tower: SmolVLM-256M's 0.26 B against its decoder's 0.16 B was skipped as another model (fixR)."""
    if not spec.params:
        return None
    extra = spec.mtp_params + spec.gguf_mtp_blocks * spec.mtp_block_params
    if spec.vision:
        from .runtimes.ollama import projector
        extra += (projector(spec) or {}).get("params") or 0
    return (spec.params, spec.params + extra) if extra else spec.params


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


def weights_next_to(folder: Path, n_layers: int = _MAX_LAYERS, params: int | None = None, packing: dict | None = None):
    """Exact weight bytes from the checkpoint beside a config.json: (bytes, which files, skipped file names, or
    (name, why) pairs). With an index (*.safetensors.index.json), the files its weight_map names (its total_size when
    stated); without one, the .safetensors files whose tensors are this decoder's (layer indices below n_layers) and
    whose parameters, all together, are the config's `params` within PARAMS_RATIO. Other files in the folder (another
    model's checkpoint, a LoRA, an unreadable file) are skipped and named, never counted."""
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
    used, skipped, tables = [], [], {}
    total = 0
    for f in files:
        try:
            table = headers.read_safetensors(f)
        except Exception as exc:  # noqa: BLE001 - a broken stray file must not fail the command (ux50 S8)
            skipped.append((f.name, f"unreadable: {str(exc).splitlines()[0][:120]}"))
            continue
        if _is_decoder_file(table, n_layers):
            used.append(f.name)
            tables.update(table)
            total += headers.table_bytes(table)
        else:
            skipped.append(f.name)
    wrong = _params_mismatch(tables, params, packing or {}) if used else None
    if wrong:  # the decoder-looking files together are another model (a text encoder's layers, another size)
        skipped += [(n, wrong if len(used) == 1 else f"together {wrong}") for n in used]
        used, total = [], 0
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
