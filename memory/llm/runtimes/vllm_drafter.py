"""vLLM's speculative decoding with a separate drafter: --speculative-config '{"method": ..., "model": ...,
"num_speculative_tokens": N}'. The drafter is a model of its own: vLLM loads its weights with the target's ("Model
loading took" counts both: jethac/dgx-spark-hijinks prints "Loading drafter model..." before it) and gives its attention
layers KV cache specs next to the target's, so they take pages of the same pool as a kind of their own (cache.DRAFT,
cache.vllm_layout), or, where their spec is the target's and the target's layers are all alike, as more layers of its
one group (joins_target_group). What is read of the drafter comes from its config.json, given as the "model" path; nothing is
guessed from a repo id.

One row per method vLLM names (config/speculative.py); a method without a row is refused with the reason."""
import json
from pathlib import Path

from ...errors import UserError
from ...units import fmt_bytes
from .. import files
from ..spec import _quant_bits, _quant_group, _quant_name, _quant_sym
from ..weights import linear_bits, skip_matcher
from .vllm_loader import check_quant_width
from ..cache import FULL

# the methods whose drafter kv sizes, and what each keeps of its own (vllm/model_executor/models/qwen3_dflash.py:
# DFlashQwen3Model's Qwen3-style decoder layers, an fc = ReplicatedLinear(len(target_layer_ids) x hidden -> hidden) on
# every GPU, no token table or head of its own: "Sharing target model embedding weights / lm_head weights with the
# draft model"; a layer_types entry "sliding_attention" gives that layer the config's sliding_window,
# _get_dflash_per_layer_sliding_window)
# EAGLE (vllm/model_executor/models/llama_eagle.py) and EAGLE-3 (llama_eagle3.py) Llama heads: Llama decoder layers and
# an fc on every GPU (ReplicatedLinear) from 2 x hidden (EAGLE: token embedding and the target's last hidden state) or
# 3 x target_hidden_size (EAGLE-3: three target layers' hidden states); EAGLE-3's first layer reads 2 x hidden into its
# q/k/v (QKVParallelLinear(qkv_input_size = 2 * hidden_size)) and keeps its own ParallelLMHead of draft_vocab_size rows
# with an int64 draft_id_to_target_id of as many; the token table is the target's when the checkpoint has none (the
# proposer's _maybe_share_embeddings deletes the drafter's), and EAGLE's head is the target's (_maybe_share_lm_head for
# method "eagle"). The yuhuili checkpoints' config.json names LlamaForCausalLM (SafeAILab/EAGLE's training configs)
# One row a method: archs read, fc input width (taps x hidden), first layer's q/k/v input (x hidden), own head rows.
DRAFTER_METHODS = {
    "dflash": {"archs": ("DFlashDraftModel", "DFlash2DraftModel"), "fc_taps": "dflash_config.target_layer_ids",
               "qkv_in": 1, "own_head": False},
    "eagle": {"archs": ("LlamaForCausalLM", "EagleLlamaForCausalLM"), "fc_taps": 2, "qkv_in": 1, "own_head": False},
    "eagle3": {"archs": ("LlamaForCausalLM", "LlamaForCausalLMEagle3", "Eagle3LlamaForCausalLM"), "fc_taps": 3,
               "qkv_in": 2, "own_head": True},
}
# methods that draft with the target's own layers (no model to read): --mtp-tokens' path
OWN_LAYER_METHODS = ("mtp",)
# methods that draft with no model at all: vLLM's NgramProposer (vllm/v1/spec_decode/ngram_proposer.py) matches the
# request's n-grams in numba over host numpy buffers (max_num_seqs x k int32) and the runner builds it with no device
# (gpu_model_runner: `elif method == "ngram": self.drafter = NgramProposer(self.vllm_config)`); SpeculativeConfig's
# __repr__ names no model for it. No weights, no cache layers; its num_speculative_tokens still add a state page a
# request (MambaSpec num_speculative_blocks = num_speculative_state_tokens() for any method: layers/mamba/abstract.py)
# and widen the graph capture sizes, as every drafter's do. Not ngram_gpu (a max_num_seqs x max_model_len token table
# on the GPU)
MODEL_FREE_METHODS = ("ngram",)
# a drafter checkpoint's linear quantization kv reads (spec._quant_name of its quantization_config): its projections'
# bits by weights.linear_bits (the group's scale, and zero point unless symmetric)
QUANT_FORMATS = ("int4", "int8", "fp8", "awq", "gptq")
PROJ = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj",
        "mlp.down_proj")
SPEC_TOKENS_MAX = 16


def parse(value) -> dict:
    """The --speculative-config value (a JSON object, or a dict) checked: {"method", "tokens", "model"}."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise UserError(f"--speculative-config must be a JSON object as vLLM takes it, e.g. "
                            f"'{{\"method\":\"dflash\",\"model\":\"DIR\",\"num_speculative_tokens\":7}}': {exc}") from None
    if not isinstance(value, dict):
        raise UserError(f"--speculative-config must be a JSON object, got {type(value).__name__}")
    method = value.get("method")
    n = value.get("num_speculative_tokens")
    if not isinstance(method, str) or not method:
        raise UserError("--speculative-config needs a \"method\" (mtp, dflash, eagle, eagle3)")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= SPEC_TOKENS_MAX:
        raise UserError(f"--speculative-config \"num_speculative_tokens\" must be a whole number 1-{SPEC_TOKENS_MAX}, "
                        f"got {n!r}")
    if method not in OWN_LAYER_METHODS + MODEL_FREE_METHODS and method not in DRAFTER_METHODS:
        raise UserError(f"--speculative-config method {method!r}: its drafter's memory is not modelled (kv reads "
                        f"{', '.join(OWN_LAYER_METHODS + tuple(DRAFTER_METHODS) + MODEL_FREE_METHODS)}); leave it out "
                        "to size the target alone")
    model = value.get("model")
    if method in DRAFTER_METHODS and not isinstance(model, str):
        raise UserError(f"--speculative-config method {method!r} needs the drafter's \"model\": the path of its "
                        "config.json (or of the folder holding it)")
    # the keys kv does not read (draft_tensor_parallel_size, max_model_len, ...): kept for the printed command and named
    others = {k: v for k, v in value.items() if k not in ("method", "num_speculative_tokens", "model")}
    return {"method": method, "tokens": n, "model": model, "others": others}


def others_note(others: dict) -> str:
    """The note for the --speculative-config keys kv does not read (parse's "others"), for either method."""
    return (f"--speculative-config {', '.join(sorted(others))}: not read, the drafter is sized without them (kept in "
            "the printed command)")


# The published DFlash drafters kv reads by their Hub repo id (a "model" that is no local path): the fields of their
# config.json that read_drafter reads, each from a named public source (no file of theirs is fetched)
# - z-lab/Qwen3.6-27B-DFlash (snapshot 09196886..., 3.3 GB): 5 layers, hidden 5120, 32 heads, 8 KV heads x 128,
#   intermediate 17408, fc over 5 taps [1, 16, 31, 46, 61] (5120 x 25600), vocab 248320: a public Rust test parsing the
#   checkpoint's config.json (parse_qwen35_27b_dflash_config), a public notes file on the z-lab snapshot ("5 transformer
#   layers, hidden=5120, GQA 32/8, intermediate=17408, vocab=248320; fc [5120 x 25600] BF16") and a public re-build of
#   its geometry (build_qwen36_27b_dflash_config); the code search index names none of their repositories. That
#   re-build writes layer_types as four 2048-token sliding layers and one full (their order is not read here). vLLM
#   before 0.24 sizes every layer full: club-3090#46's printed pool (0.20.1rc1) comes out exactly with five full layers
#   of 8 KV heads (tests/unit/test_kv_ellm24.py); from 0.24.0 (the DFlash V2 runner) mixed layers are two KV groups
#   (read_drafter, MIXED_GROUPS_FROM)
# - z-lab/Qwen3.6-35B-A3B-DFlash: benchmarks/data/drafters/Qwen3.6-35B-A3B-DFlash/README.md (snapshot 42d3b34d)
PUBLISHED = {
    "z-lab/Qwen3.6-27B-DFlash": {
        "architectures": ["DFlashDraftModel"], "hidden_size": 5120, "num_hidden_layers": 5, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 17408, "vocab_size": 248320,
        "layer_types": ["sliding_attention"] * 4 + ["full_attention"], "sliding_window": 2048,
        "dflash_config": {"mask_token_id": 248070, "target_layer_ids": [1, 16, 31, 46, 61]}},
    "z-lab/Qwen3.6-35B-A3B-DFlash": {
        "architectures": ["DFlashDraftModel"], "hidden_size": 2048, "num_hidden_layers": 8, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144, "vocab_size": 248320,
        "dflash_config": {"mask_token_id": 248070, "target_layer_ids": [1, 10, 19, 28, 37]}},
}

# A DFlash drafter mixing sliding and full layers: from vLLM 0.24.0 (the DFlash V2 model runner) each kind is a KV
# cache group of its own, the sliding layers holding at most their window a request. Read in vLLM's source:
# vllm/model_executor/models/qwen3_dflash.py's _resolve_layer_attention (vllm-project/vllm 036a00d1, lines 118-130)
# raises NotImplementedError for such a drafter off the V2 runner ("Mixed sliding/full attention needs multiple KV
# groups (V2 runner only)"), then gives each sliding layer its window (per_layer_sliding_window). Not read here, from
# public notes on vLLM: vllm/config/vllm.py's use_v2_model_runner forces V2 by _dflash_needs_multi_kv_group
# (0 < sliding layers < all), and "[MRV2][Spec Decode] DFlash" (#44586) is a v0.24.0 release highlight. kv's pool
# holds one drafter kind (cache.DRAFT): every layer is sized full, as before 0.24 (club-3090#46's 0.20.1rc1 pool),
# a local config.json and a repo id alike, and from 0.24 (or the newest) a note says that is the pre-0.24 sizing. Not
# refused: batch 98's GB10 row on 0.24 (fixed pool, 10 speculative tokens) prints within 0.6 % of it (rev25 B1)
MIXED_GROUPS_FROM = (0, 24, 0)

# a "model" that is no local file or folder and no repo id of PUBLISHED
NOT_LOCAL = ("the drafter's config.json is not read: --speculative-config \"model\" {model!r} is no local config.json or "
             "folder holding one, nor a drafter kv describes by name ({known}); download its config.json (the Hub's "
             "file) and give its path as \"model\"")


def _drafter_config(model: str, method: str) -> tuple:
    """(config, where it was read): a local config.json (or its folder), else a PUBLISHED drafter's fields by repo id,
    matched as the Hub matches repo names, case aside (rev25 D3); a refusal lists the drafters known for the method."""
    if not Path(model).exists():
        repo = next((k for k in PUBLISHED if k.lower() == model.strip().lower()), None)
        if repo:
            return PUBLISHED[repo], f"{repo}, kv's table of published drafters"
    known = [k for k, c in PUBLISHED.items() if set(c["architectures"]) & set(DRAFTER_METHODS[method]["archs"])]
    return files.read_config(model, missing=NOT_LOCAL.format(
        model=model, known=", ".join(known) if known else f"none for method {method!r}"))


def _int(cfg, key, lo=1, hi=1 << 20, default=None):
    v = cfg.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise UserError(f"the drafter's config.json: {key} must be a whole number {lo}..{hi}, got {v!r}")
    return v


def read_drafter(method: str, model: str, version: tuple | None = None) -> dict:
    """The drafter's geometry from its config.json: layers, hidden size, heads, KV heads, head size, MLP width, the
    fc's taps and, for sliding layers, the window; parameters by where vLLM keeps them. version: vLLM's (None: the
    newest), which decides how mixed sliding and full layers are sized (MIXED_GROUPS_FROM)."""
    cfg, path = _drafter_config(model, method)    # a local file read as the target's (load_config)
    row = DRAFTER_METHODS[method]
    archs = cfg.get("architectures") or []
    if not any(a in row["archs"] for a in archs if isinstance(a, str)):
        raise UserError(f"the drafter's config.json names {archs!r}: method {method!r} is read for "
                        f"{', '.join(row['archs'])}")
    q = cfg.get("quantization_config")
    fmt = _quant_name(q) if isinstance(q, dict) else None
    if q and fmt not in QUANT_FORMATS:
        raise UserError(f"the drafter's config.json has a quantization_config ({fmt or q!r}) kv does not read for a "
                        f"drafter (it reads {', '.join(QUANT_FORMATS)}: compressed-tensors, GPTQ, AWQ, fp8)")
    check_quant_width(fmt, _quant_bits(q) if q else None, f"the drafter {path}")   # vLLM loads it as the target
    n = _int(cfg, "num_hidden_layers", hi=64)
    d = _int(cfg, "hidden_size")
    heads = _int(cfg, "num_attention_heads", hi=1024)
    kvh = _int(cfg, "num_key_value_heads", hi=1024, default=heads)
    hd = _int(cfg, "head_dim", default=d // heads)
    inter = _int(cfg, "intermediate_size")
    if isinstance(row["fc_taps"], int):  # EAGLE: 2 x hidden; EAGLE-3: 3 x the target's hidden size
        taps = [None] * row["fc_taps"]
        fc_width = _int(cfg, "target_hidden_size", default=d)
    else:
        dfc = cfg.get("dflash_config")
        taps = dfc.get("target_layer_ids") if isinstance(dfc, dict) else None
        fc_width = d
        if not isinstance(taps, list) or not taps:
            raise UserError("the drafter's config.json has no dflash_config.target_layer_ids (the target layers its fc "
                            "reads)")
    head = _int(cfg, "draft_vocab_size", hi=1 << 22, default=_int(cfg, "vocab_size", hi=1 << 22)) \
        if row["own_head"] else 0
    types = cfg.get("layer_types") or ["full_attention"] * n
    if not isinstance(types, list) or len(types) != n or not set(types) <= {"full_attention", "sliding_attention"}:
        raise UserError(f"the drafter's config.json: layer_types must list {n} of full_attention / sliding_attention")
    window, mixed = None, None
    if "sliding_attention" in types and len(set(types)) > 1:  # every layer sized full: separate_drafter's note says so
        mixed = (types.count("sliding_attention"), _int(cfg, "sliding_window"),  # none: refused, not "None-token"
                 version is None or version >= MIXED_GROUPS_FROM)
    elif "sliding_attention" in types:
        window = _int(cfg, "sliding_window")
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16").lower()
    dense = 32 if dtype in ("float32", "fp32") else 16
    bits = linear_bits(fmt, _quant_group(q), _quant_sym(q), _quant_bits(q)) if q else dense
    skip = (q or {}).get("ignore") or (q or {}).get("modules_to_not_convert") or []
    if not isinstance(skip, list):
        raise UserError(f"the drafter's config.json: quantization_config's ignore list must be a list of module "
                        f"names, got {skip!r}")
    skipped = skip_matcher(skip)
    # bits of each projection: a module the quantization_config leaves out keeps the dtype's (vLLM's module names:
    # model.layers.N.self_attn.q_proj ..., model.fc; syv-ai's W4A16 DFlash2 lists its bf16 modules so)
    proj = [[(name, dense if q is None or skipped(f"model.layers.{i}.{name}") else bits) for name in PROJ]
            for i in range(n)]
    return {"layers": n, "hidden": d, "heads": heads, "kv_heads_total": kvh, "head_dim": hd, "intermediate": inter,
            "fc_in": len(taps) * fc_width, "qkv_in": row["qkv_in"], "head": head, "window": window, "arch": next(a for a in archs if a in row["archs"]),
            "proj_bits": proj, "fc_bits": dense if q is None or skipped("model.fc") else bits,
            "format": fmt or dtype, "path": str(path), "mixed_as_full": mixed, "aux": uses_aux(method, cfg)}


# The target's tapped hidden states (AUX_METHODS): with an EAGLE-3 or DFlash drafter vLLM's runner sets
# use_aux_hidden_state_outputs (v1/worker/gpu_model_runner.py, 0.20.2 sdist: True for dflash, the drafter's
# eagle3_use_aux_hidden_state for eagle3, which llm_base_proposer reads from eagle_config's use_aux_hidden_state,
# default True; EAGLE-1 drafts from the last hidden state alone), and the target's forward keeps each tapped layer's
# output as a new tensor (models/interfaces.py _maybe_add_hidden_state: aux_hidden_states.append(hidden_states +
# residual), called after every layer by llama.py and qwen3_next.py) until it returns them with the last layer's
# output; _dummy_run holds them through the drafter's dummy run. The profile forward of max_num_batched_tokens so
# holds taps x hidden values a token in the model dtype, unsplit by tensor parallelism, beside its last layers'
# intermediates: the fc's input width (fc_in) a token
AUX_METHODS = ("eagle3", "dflash")


def uses_aux(method: str, cfg: dict) -> bool:
    """Whether vLLM's target forward keeps the tapped layers' hidden states for this drafter (AUX_METHODS; an EAGLE-3
    config may turn them off with eagle_config.use_aux_hidden_state false, which vLLM reads; DFlash always keeps them)."""
    if method not in AUX_METHODS:
        return False
    eagle = cfg.get("eagle_config") if method == "eagle3" else None
    return not (isinstance(eagle, dict) and eagle.get("use_aux_hidden_state") is False)


def drafter_for_rank(g: dict, tp: int) -> dict:
    """The drafter as one GPU holds it: its KV heads split like the target's (a head replicated when tp exceeds them;
    QKVParallelLinear), for the pool (cache.vllm_layout's drafter)."""
    return {"layers": g["layers"], "kv_heads": max(1, g["kv_heads_total"] // tp), "head_dim": g["head_dim"],
            "window": g["window"]}


def weight_bytes(g: dict, tp: int) -> int:
    """The drafter's weights on one GPU: its layers' projections split over the tensor-parallel GPUs (QKVParallelLinear,
    RowParallelLinear, MergedColumnParallelLinear; the first layer's q/k/v read qkv_in x hidden), its fc whole on each
    (ReplicatedLinear), each at its bits; an own head (EAGLE-3: draft_vocab_size x hidden, ParallelLMHead, split over
    the GPUs) at the dtype's 16 bits with its int64 draft-to-target map; norms left out."""
    d, hd, i = g["hidden"], g["head_dim"], g["intermediate"]
    q, kv, o = g["heads"] * hd, g["kv_heads_total"] * hd, d * g["heads"] * hd

    def size(layer, name):
        width = d * (g.get("qkv_in", 1) if layer == 0 else 1)
        return {"self_attn.q_proj": width * q, "self_attn.k_proj": width * kv, "self_attn.v_proj": width * kv,
                "self_attn.o_proj": o, "mlp.gate_proj": d * i, "mlp.up_proj": d * i, "mlp.down_proj": d * i}[name]
    layers = sum(size(n, name) * bits for n, layer in enumerate(g["proj_bits"]) for name, bits in layer) / 8
    head = g.get("head", 0) * (d * 2 / tp + 8)
    return int(layers / tp + g["fc_in"] * d * g["fc_bits"] / 8 + head)


def joins_target_group(spec, g: dict) -> bool:
    """True where the drafter's attention layers have the target's cache spec and the target's layers are all full
    attention of one shape (a dense Llama under an EAGLE / EAGLE-3 head): vLLM's get_kv_cache_groups then finds the
    spec uniform over every layer, the drafter's included (kv_cache_utils is_kv_cache_spec_uniform ->
    _get_kv_cache_groups_uniform_spec), so they share one group and its blocks of 16 tokens: the pool is the target's
    with the drafter's layers added (cache.with_draft_layers), not a kind of their own (cache.DRAFT). manojarulmurugan's
    0.24.0 EAGLE run of Llama-3-8B GPTQ prints 448,064 tokens = 28,004 blocks of 33 layers x 16 x 4096 bytes for
    56.41 GiB (from 56.405); one-layer groups give 448,067 at 56.405 and 448,107 at 56.41, no whole block."""
    same = lambda xs: xs is None or len(set(map(str, xs))) <= 1  # noqa: E731
    return (not g["window"] and not spec.mla and not spec.linear_state and set(spec.layer_kinds) == {FULL}
            and same(spec.layer_kv_elems) and same(spec.layer_kv_heads) and g["kv_heads_total"] == spec.n_kv_heads
            and g["head_dim"] == spec.head_dim_k == spec.head_dim_v and not spec.sliding_window)


def separate_drafter(spec, parsed: dict, tp: int, roles: dict, s: dict, notes: list, version=None) -> dict:
    """roles with the drafter's weights added, s with its layers for the pool (s["drafter"]) and its speculative tokens
    (s["spec_tokens"]: a state page more a request each, a wider DeltaNet conv state, as for MTP). A model-free
    method (MODEL_FREE_METHODS) adds its speculative tokens alone."""
    if parsed["method"] in MODEL_FREE_METHODS:
        s.update(spec_tokens=parsed["tokens"])
        notes.append(f"{parsed['method']} drafting ({parsed['tokens']} speculative tokens): no drafter model, no weights "
                     "or cache layers of its own (vLLM's NgramProposer matches n-grams on the host)")
        if parsed.get("others"):
            notes.append(others_note(parsed["others"]))
        return roles
    g = read_drafter(parsed["method"], parsed["model"], version)
    if g["hidden"] != spec.hidden:  # it reads the target's token table and hidden states: a drafter for another model
        raise UserError(f"the drafter's hidden_size {g['hidden']} is not {spec.name}'s {spec.hidden}: it drafts for "
                        "another model")
    w = weight_bytes(g, tp)
    same = joins_target_group(spec, g)
    if g["aux"]:  # the target's tapped hidden states its profile forward holds (AUX_METHODS)
        s["aux_hidden"] = g["fc_in"]
    if same:  # one KV cache group of the target's and the drafter's layers (joins_target_group)
        s.update(draft_layers=g["layers"], spec_tokens=parsed["tokens"])
    else:
        s.update(drafter=drafter_for_rank(g, tp), spec_tokens=parsed["tokens"])
    kind = f"sliding ({g['window']}-token window)" if g["window"] else "full"
    notes.append(f"{g['arch']} drafter ({parsed['tokens']} speculative tokens, {g['path']}): {fmt_bytes(w)} of its "
                 f"weights on each GPU ({g['format']}; token table{'' if g['head'] else ' and head'} the target's), its "
                 f"{g['layers']} {kind} attention layers "
                 + ("in the target's one KV cache group (the same cache spec)" if same else "a kind of their own in the KV pool")
                 + ("; DFlash2's convolutions and candidate selector are not counted" if parsed["method"] == "dflash"
                    else (f"; its own {g['head']}-row head counted" if g["head"] else "")))
    if g["mixed_as_full"]:
        k, win, later = g["mixed_as_full"]
        s["drafter_kv_sizing"] = "all-full (vLLM < 0.24)"  # --json: the pre-0.24 sizing whatever the build (rev26 S4)
        notes.append(f"the drafter's config.json names {k} of its {g['layers']} layers sliding ({win}-token window): "
                     "sized every layer full, as vLLM before 0.24 does" + (
                         "; " + ("the newest vLLM (0.24 or later)" if version is None else "this build is 0.24 or "
                                 "later") + ", whose DFlash V2 runner gives the sliding and full layers a KV "
                         "cache group each, a sliding layer holding at most its window a request: not modelled, so the "
                         "drafter's KV figures here are the pre-0.24 all-full sizing" if later else ""))
    if parsed.get("others"):
        notes.append(others_note(parsed["others"]))
    return dict(roles, total=roles["total"] + w, how=roles["how"] + f" + {fmt_bytes(w)} of {g['arch']} drafter")
