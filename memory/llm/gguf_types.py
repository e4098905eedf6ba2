"""The tensor types a llama.cpp load prints, as the weights of a MoE GGUF whose file kv has not read.

llama.cpp's loader prints a file's tensor types with their counts before it loads (llama-model-loader.cpp:
"llama_model_loader: - type q8_0:  373 tensors"). For a MoE file whose routed experts take two K types (ffn_gate_exps
and ffn_up_exps one, 2 x the MoE layers; ffn_down_exps another, 1 x), whose output head has a type of its own (one
tensor: llama-quant.cpp gives output.weight its own type, Q6_K for the K-quants) and whose every other matmul, the
token table with them, has one more type, the counts place every tensor: the experts at theirs, the head at its one,
everything else in the blocks at the remaining type but the routers, which llama-quant.cpp never quantizes ("do not
quantize expert gating tensors": ffn_gate_inp.weight stays F32 in a file printing no 16-bit type). The norms and
other 1-D F32 tensors (under 0.1 % of a block) are not counted. unsloth's Qwen3.5-122B-A10B Q4_K_M prints f32 361,
q8_0 373, q4_K 96, q5_K 48, q6_K 1 (miminashi/llm-server-ops startup logs, batch 83): 76.52 GB = 71.26 GiB against
the printed "file size = 71.27 GiB", and its blocks' non-expert tensors at Q8_0 where llama.cpp's own Q4_K_M recipe
would give the file type's mix. Any other shape of counts is refused (give the file, --gguf)."""
import re
from dataclasses import replace

from ..errors import UserError
from . import gguf_rule as RULE
from .weights import TYPE_BITS, moe_layer_flags

# the 16/32-bit types a router may keep; a file printing a 16-bit one leaves the routers' type open
UNQUANTIZED = ("F32", "F16", "BF16")
# 'q8_0=373', 'q8_0:373', or the loader's own line pasted whole: 'llama_model_loader: - type q8_0:  373 tensors'
_ITEM = re.compile(r"\s*(?:llama_model_loader:\s*)?(?:-\s*type\s+)?([A-Za-z0-9_]+)\s*[=:]\s*(\S+?)(?:\s+tensors)?\s*")


def _count(t, n) -> int:
    """A printed count: a positive whole number."""
    if isinstance(n, bool) or not (isinstance(n, int) or (isinstance(n, str) and n.strip().isdigit())) or int(n) < 1:
        raise UserError(f"--gguf-types: the count of {t} must be a positive whole number of tensors, got {n!r}")
    return int(n)


def parse(value) -> dict:
    """{TYPE: count} from a mapping or 'f32=361,q8_0=373,...' (the loader's lines as TYPE=N, or pasted as it prints
    them, '- type q8_0: 373 tensors', one a line or comma-separated). A type given twice is refused."""
    if isinstance(value, dict):
        items = list(value.items())
    else:
        items = []
        for part in re.split(r"[,\n]", str(value)):
            if not part.strip():
                if "\n" in str(value):
                    continue  # a blank line between pasted lines
                raise UserError(f"--gguf-types takes TYPE=N,... with no empty item (a trailing comma?): {value!r}")
            m = _ITEM.fullmatch(part)
            if not m:
                raise UserError(f"--gguf-types takes TYPE=N,... as llama.cpp's loader prints them "
                                f"('- type q8_0: 373 tensors' is q8_0=373), got {part.strip()!r}")
            items.append((m.group(1), m.group(2)))
    out = {}
    for t, n in items:
        up = str(t).strip().upper()
        if up not in TYPE_BITS:
            raise UserError(f"--gguf-types: kv has no size for type {t} (it sizes {', '.join(sorted(TYPE_BITS))})")
        if up in out:
            raise UserError(f"--gguf-types: type {t} given twice; the loader prints each type once")
        out[up] = _count(t, n)
    return out


def roles(spec, counts: dict) -> dict:
    """The type of each role the counts place: gate_up, down (the routed experts), output, rest, router."""
    if spec.weights_bytes:
        raise UserError("the weights are read from the file already: give --gguf FILE or --gguf-types, not both")
    if not (spec.n_experts and spec.expert_params and spec.params):
        raise UserError(f"--gguf-types places a MoE file's routed experts; {spec.name} has none (give --gguf FILE)")
    if any(counts.get(t) for t in ("F16", "BF16")):
        raise UserError(f"--gguf-types {counts}: a 16-bit type printed leaves the routers' type open (llama-quant.cpp "
                        "keeps ffn_gate_inp as converted); give the file (--gguf)")
    n_moe = sum(moe_layer_flags(spec))
    quant = {t: n for t, n in counts.items() if t not in UNQUANTIZED and n}
    if len(quant) == 1:
        # one quantized type printed (a mainline Q6_K or Q8_0 file: llama-quant.cpp gives the output and the token
        # table the file type's own Q6_K / Q8_0 there): every matmul, experts and head with them, holds it; the counts
        # merge the experts' 3 x n_moe tensors with the rest, so they need not part
        (t, n), = quant.items()
        # exactly the file's matmuls (RULE.census, with or without MLA's split k_b/v_b), not merely enough for the
        # experts: a file with other matmuls in a 16-bit or second type would be misplaced (rev9 S2)
        whole = {len(RULE.census(spec, kb_vb)) for kb_vb in ((False, True) if spec.kv_lora_rank else (False,))}
        if n not in whole:
            want = " or ".join(map(str, sorted(whole)))
            raise UserError(f"--gguf-types {counts}: {n} {t} tensors are not {spec.name}'s {want} matmuls, so some "
                            "print another type; give the file (--gguf)")
        return {"gate_up": t, "down": t, "output": t, "rest": t, "router": "F32", "embedding": t}
    by_count = {}
    for t, n in quant.items():
        by_count.setdefault(n, []).append(t)
    gate_up, down = by_count.get(2 * n_moe, []), by_count.get(n_moe, [])
    single = by_count.get(1, [])
    if len(gate_up) != 1 or len(down) != 1 or len(single) > 1:
        raise UserError(f"--gguf-types {counts}: kv places a file whose routed experts print two types ({2 * n_moe} "
                        f"tensors of ffn_gate/up_exps, {n_moe} of ffn_down_exps for {spec.name}'s MoE layers) and whose "
                        "output head prints at most one of its own; give the file (--gguf)")
    rest = [t for t in quant if t not in (gate_up[0], down[0], *single)]
    if len(rest) != 1:
        raise UserError(f"--gguf-types {counts}: beside the experts and the output head kv places one type for every "
                        "other matmul; give the file (--gguf)")
    # the single-count tensor is the output head; a tied file has no output.weight and quantizes token_embd as the
    # output (llama-quant.cpp), which llama.cpp's output layer reuses: the table takes the head's type
    out = single[0] if single else rest[0]
    return {"gate_up": gate_up[0], "down": down[0], "output": out, "rest": rest[0], "router": "F32",
            "embedding": out if spec.tied else rest[0]}


def given(spec, counts, ftype=None):
    """The spec with the weights the printed types give: the whole file, the token table, the head and each layer's
    routed experts (spec.expert_file_bytes), as a GGUF's table would. Counts that part no roles but are exactly what
    llama-quantize's rule gives the file type (ftype, --weights-dtype) place each tensor by the rule (gguf_rule.py)."""
    counts = parse(counts)
    try:
        r = roles(spec, counts)
    except UserError:
        rows = None
        if ftype and spec.n_experts and not spec.weights_bytes and not any(counts.get(t) for t in ("F16", "BF16")):
            rows = RULE.placed(spec, str(ftype).strip().upper(), counts)
        if rows is None:
            raise
        return _by_rule(spec, counts, str(ftype).strip().upper(), rows)
    moe = moe_layer_flags(spec)
    per_mat = spec.expert_params / sum(moe) / 3  # gate, up and down: a layer's experts
    bits = TYPE_BITS
    layer = int(per_mat * (2 * bits[r["gate_up"]] + bits[r["down"]]) / 8)
    emb_params = spec.vocab * spec.hidden
    emb = int(emb_params * bits[r["embedding"]] / 8)
    out = int(emb_params * bits[r["output"]] / 8)
    router = sum(moe) * spec.hidden * spec.n_experts
    other = spec.params - spec.expert_params - emb_params * (1 if spec.tied else 2) - router
    total = (layer * sum(moe) + emb + (0 if spec.tied else out) + router * bits[r["router"]] / 8
             + other * bits[r["rest"]] / 8)
    mix = ", ".join(f"{t.lower().replace('_k', '_K')} {n}" for t, n in counts.items())
    return replace(spec, weights_bytes=int(total), embed_bytes=emb, output_bytes=emb if spec.tied else out,
                   expert_file_bytes=tuple((layer if m else 0, 0) for m in moe),
                   weights_source=(f"as given: the tensor types llama.cpp's loader printed ({mix}): routed experts "
                                   f"{r['gate_up']} / {r['down']} (ffn_gate+up / ffn_down), output {r['output']}, "
                                   f"routers F32, the rest {r['rest']} (--gguf-types)"))


def _by_rule(spec, counts, ftype, rows):
    """given()'s spec from gguf_rule.placed's tensors: their bytes, the routers F32 (llama-quant.cpp never quantizes
    ffn_gate_inp); the norms, under 0.1 % of a block, are not counted (as in given())."""
    moe = moe_layer_flags(spec)
    router = sum(moe) * spec.hidden * spec.n_experts * 4
    by = {n: b for n, i, t, b in rows if i < 0}
    exps = [sum(b for n, i, t, b in rows if i == layer and n.endswith("_exps")) for layer in range(len(moe))]
    emb = by["token_embd"]
    out = emb if spec.tied else by["output"]
    mix = ", ".join(f"{t.lower().replace('_k', '_K')} {n}" for t, n in counts.items())
    kinds = {n: t for n, i, t, b in rows if i == next(j for j, m in enumerate(moe) if m)}
    return replace(spec, weights_bytes=int(sum(b for *_, b in rows) + router), embed_bytes=emb, output_bytes=out,
                   expert_file_bytes=tuple((e, 0) for e in exps),
                   weights_source=(f"as given: the tensor types llama.cpp's loader printed ({mix}) are what "
                                   f"llama-quantize's {ftype} rule gives {spec.name} (gguf_rule.py): routed experts "
                                   f"{kinds['ffn_gate_exps']} / {kinds['ffn_down_exps']}, output "
                                   f"{next(t for n, i, t, b in rows if n == ('token_embd' if spec.tied else 'output'))}"
                                   ", each tensor by the rule (--gguf-types)"))
