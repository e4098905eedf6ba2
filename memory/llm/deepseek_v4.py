"""DeepSeek-V4 (DeepseekV4ForCausalLM, model_type deepseek_v4: V4-Flash, V4-Pro) as vLLM allocates it: spec.from_config
calls from_config here; cache.py's vLLM pool, request and estimate functions call pool / request_bytes / estimated_max_len
(the layout is this model's own, not cache.vllm_layout's); plan_checks refuses the other runtimes; params.count_params
calls dsv4_params for the weights; plan_weights.vllm_load_extras adds load_buffers, the buffers vLLM builds with the
model (task dsv4c).

Each decoder layer i has compress_ratio c = max(1, compress_ratios[i]) (vLLM deepseek_v4.py DeepseekV4Attention at
vllm-project/vllm f1b76c19a8f7fc2f2a8ce2918533933128a3b22a; the list's tail past num_hidden_layers is the MTP layers').
Its caches, every one a KV cache spec of its own in vLLM's pool (kv56's reading, pages checked against the vLLM
kv_cache_interface.py quoted in look-ups 12 and 20 of the task notes), fp8 only:
  - every layer: the sliding-window latent, DeepseekV4SWACache -> SlidingWindowMLASpec(block 64, window
    sliding_window), 584 bytes a token (448 fp8 NoPE + 128 RoPE + 8 scale: MLAAttentionSpec.real_page_size_bytes for
    fp8_ds_mla / deepseek_v4), 64 x 584 = 37,376 padded to 37,440 (_apply_alignment_padding: round_up to alignment 576);
  - c = 4 or 128: the compressed latent, MLAAttentionSpec(block_size 256, compress_ratio c): 256 // c slots of 584
    bytes, padded (c 4: 37,440; c 128: 1,168 -> 1,728);
  - c = 4: the Lightning Indexer's key, MLAAttentionSpec(head 128 + 128 // 128 x 4 = 132 bytes, compress_ratio 4):
    64 x 132 = 8,448 -> 8,640;
  - compressor states (deepseek_compressor.py CompressorStateCache): SlidingWindowMLASpec(block 4 if c == 4 else 8,
    float32 state of 2 x coff x head_dim, window coff x c, coff = 1 + (c == 4)): c 4 latent 4 x 2048 x 4 = 32,768 ->
    32,832 (window 8), c 4 indexer 4 x 512 x 4 = 8,192 -> 8,640 (window 8), c 128 8 x 1024 x 4 -> 32,832 (window 128).
The grouping (vLLM v1/core/kv_cache_planning.py, read as file id 55240182351, look-ups 13-16):
  group_and_unify_kv_cache_specs: one group of every MLAAttentionSpec (the full-MLA group), and the sliding specs grouped
  by (block_size, sliding_window): the latent windows, the c 4 states, the c 128 states;
  _get_kv_cache_groups_uniform_groups: each group's layer tuples (UniformTypeKVCacheSpecs.get_num_layer_tuples: the most
  layers of one page size), num_layer_tuples = _approximate_gcd of those counts (the least padding, lower bound the
  full-MLA group's), each sliding page padded up to the nearest full-MLA page, each sliding group split into
  cdiv(layers per page size, num_layer_tuples) groups (layer_tuples[i::k]);
  _get_kv_cache_config_deepseek_v4: num_blocks = available // (sum of the full-MLA page sizes x the longest bucket);
  a request (get_max_concurrency_for_kv_cache_config, _max_memory_usage_bytes_from_groups): each group's pages,
  cdiv(max_model_len, 256) for the full-MLA group, cdiv(min(window - 1 + in-flight tokens, max_model_len), block) + 1
  for a sliding group (SlidingWindowSpec.max_admission_blocks_per_request); the start check needs those pages x
  num_layer_tuples x the tuple's bytes.
The pool by version (layout_kind; task dsv4b's notes hold the look-ups):
  before PACKED_FROM (vLLM 0.20.2 v1/core/kv_cache_utils.py, the pip sdist): num_blocks = available // (num_layer_tuples
  x the tuple's bytes) (:1174-1229, _get_kv_cache_config_deepseek_v4); "Maximum concurrency" = num_blocks /
  cdiv(sum over groups of pages x the group's summed page bytes, the full-MLA group's summed page bytes) (:872-890,
  get_max_concurrency_for_kv_cache_config on the workers' configs, UniformTypeKVCacheSpecs.page_size_bytes the sum of
  its layers' pages, kv_cache_interface.py:633-642; reported after the least num_blocks over the workers, :2028-2049);
  from PACKED_FROM, the packed layout (_get_packed_kv_cache_layout: "A block ID is owned by one cache group at a time,
  so layouts from different groups may overlap"): a block is the largest group's summed page bytes (Flash: the
  full-MLA group, 1,002,240), the concurrency num_blocks / the groups' pages (sum over groups of cdiv(max bytes, page)),
  the start check those pages x the block (bytes_per_block x the groups' max_memory_usage_pages).
What kv does not read from DeepSeek-V4: SGLang's and llama.cpp's DeepSeek-V4 caches (refused there), vLLM's bf16
latent path of later builds (fp8 only, as DeepseekV4MLAAttention asserted at 0a291a2e), and the DSpark drafter."""
from collections import Counter

from ..errors import UserError
from .spec import FULL, LLMSpec, _int

ALIGN = 576          # every DeepSeek-V4 page is padded to a multiple of FlashMLA's 576 bytes
SLOT = 584           # fp8_ds_mla, deepseek_v4: 448 fp8 NoPE + 128 RoPE + 8 scale bytes a stored token
MLA_BLOCK = 256      # the compressed latents' and the indexer's block (tokens of the request a page covers)
SWA_BLOCK = 64       # the sliding latent's block: its page shares the c 4 latent's tensor, [256 // 4, 584]
RATIOS = (1, 4, 128)
# vLLM's packed pool for DeepSeek-V4 (a block = its largest group's pages; the concurrency over the groups' pages):
# _get_kv_cache_config_deepseek_v4 was renamed _get_kv_cache_config_packed in v0.24.0 (vllm-ascend's patch says so;
# v0.23.0 planned a tensor per (slot, page size)); the dense form is taken from 0.26, the first release the dataset
# shows with it: 0.26.1's three Flash rows (infernal-invocation build on vLLM 344438d) hold 1,002,240-byte blocks and
# 7194 pages a request, 0.21.1's row the 0.20.2 rule. 0.23-0.25 are not pinned (taken with 0.20.2's rule), and a fork
# of 0.26.1 (dspark-vllm-gx10) still reports the older concurrency.
PACKED_FROM = (0, 26)


def _up(x: int, a: int) -> int:
    return -(-x // a) * a


def is_dsv4(cfg: dict) -> bool:
    return str(cfg.get("model_type", "")) == "deepseek_v4"


def read_ratios(cfg: dict, n_layers: int, name: str) -> tuple:
    """Each decoder layer's compress ratio as vLLM takes it, max(1, compress_ratios[i]), then the MTP layers' from the
    list's tail (an absent tail entry: 1)."""
    raw = cfg.get("compress_ratios")
    if not isinstance(raw, list) or len(raw) < n_layers:
        raise UserError(f"{name}: DeepSeek-V4 needs compress_ratios, one entry for each of its {n_layers} layers, got "
                        f"{raw if not isinstance(raw, list) else len(raw)!r}")
    out = []
    for i, r in enumerate(raw):
        if isinstance(r, bool) or not isinstance(r, int) or max(1, r) not in RATIOS:
            raise UserError(f"{name}: compress_ratios[{i}] = {r!r}: vLLM's DeepSeek-V4 layers compress 4x or 128x, "
                            "or not at all (0)")
        out.append(max(1, r))
    if 4 not in out[:n_layers] and 128 not in out[:n_layers]:
        raise UserError(f"{name}: no compressed layer (compress ratio 4 or 128): vLLM's DeepSeek-V4 pool is sized "
                        "from its full-MLA group, which would be empty")
    return tuple(out)


def layer_caches(ratio: int, head_dim: int, index_dim: int, window: int) -> list:
    """[(group, page bytes, block, window or None)] of one layer's caches; group "mla" for the full-MLA group, else
    the sliding group's (block, window) key."""
    out = [((SWA_BLOCK, window), _up(SWA_BLOCK * SLOT, ALIGN), SWA_BLOCK, window)]
    if ratio == 1:
        return out
    out.append(("mla", _up(MLA_BLOCK // ratio * SLOT, ALIGN), MLA_BLOCK, None))
    coff = 1 + (ratio == 4)
    block = 4 if ratio == 4 else 8
    state = ((block, coff * ratio), _up(block * 2 * coff * head_dim * 4, ALIGN), block, coff * ratio)
    out.append(state)
    if ratio == 4:  # the Lightning Indexer: its key (fp8 + an fp32 scale a 128 values) and its compressor's state
        out.append(("mla", _up(MLA_BLOCK // 4 * (index_dim + index_dim // 128 * 4), ALIGN), MLA_BLOCK, None))
        out.append(((block, coff * ratio), _up(block * 2 * coff * index_dim * 4, ALIGN), block, coff * ratio))
    return out


def approximate_gcd(values: list, lower: int) -> int:
    """vLLM's _approximate_gcd: the d in [lower, max] with the least upward padding of every value to a multiple of d,
    ties to the larger d."""
    best_d, best_pad = lower, None
    for d in range(lower, max(max(values), lower) + 1):
        pad = sum((d - x % d) % d for x in values)
        if best_pad is None or pad < best_pad or (pad == best_pad and d > best_d):
            best_d, best_pad = d, pad
    return best_d


def layout_kind(version, v1: bool = True) -> str:
    """The pool's form for a vLLM version: "dsv4-packed" from PACKED_FROM and for no version (the newest, as the plan's
    header and runtimes.version_note say), else "dsv4-tuples"; runtimes/vllm_mla.mla_layout passes it on as the pool's
    mla_cache."""
    from .runtimes import at_least
    return "dsv4-packed" if v1 and at_least(version, *PACKED_FROM) else "dsv4-tuples"


def layout(spec: LLMSpec, draft_layers: int = 0, kind: str = "dsv4-tuples") -> dict:
    """vLLM's groups for this model's layers (and draft_layers MTP layers): {"groups": [{"pages": {page: layers},
    "block", "window", "bytes"}], "tuples", "tuple_bytes", "block_bytes", "packed"}; the full-MLA group first; a group's
    bytes are its layers' pages summed (a sliding page padded up to the nearest full-MLA page, as vLLM pads it)."""
    d = spec.dsv4
    ratios = list(d["ratios"]) + list(d["mtp_ratios"][:draft_layers])
    ratios += [1] * (spec.n_layers + draft_layers - len(ratios))
    mla, swa = Counter(), {}
    for r in ratios:
        for key, page, block, win in layer_caches(r, spec.head_dim_k, d["index_dim"], spec.sliding_window):
            if key == "mla":
                mla[page] += 1
            else:
                swa.setdefault(key, Counter())[page] += 1
    counts = [max(mla.values())] + [max(c.values()) for c in swa.values()]
    tuples = approximate_gcd(counts, counts[0])
    full_pages = sorted(mla)
    groups = [{"pages": dict(mla), "block": MLA_BLOCK, "window": None}]
    for (block, win), c in swa.items():
        padded = Counter()
        for page, n in c.items():
            padded[min(p for p in full_pages if p >= page)] += n
        per_size = set(padded.values())
        if len(per_size) != 1:  # vLLM asserts the same layer count for every page size of a sliding group
            raise UserError(f"{spec.name}: a sliding cache group of unequal page sizes, which vLLM refuses")
        n = per_size.pop()
        k = -(-n // tuples)
        for i in range(k):
            share = len(range(i, n, k))
            groups.append({"pages": {p: share for p in padded}, "block": block, "window": win})
    for g in groups:
        g["bytes"] = sum(p * n for p, n in g["pages"].items())
    longest = max(n for g in groups for n in g["pages"].values())
    tuple_bytes = sum(full_pages)
    packed = kind == "dsv4-packed"
    block = max(g["bytes"] for g in groups) if packed else tuple_bytes * longest
    return {"groups": groups, "tuples": longest, "tuple_bytes": tuple_bytes, "block_bytes": block, "packed": packed}


def group_pages(g: dict, ctx: int, in_flight: int) -> int:
    """One group's pages for a request of ctx tokens (max_memory_usage_pages): cdiv(ctx, block) for the full-MLA
    group, the window's (SlidingWindowSpec.max_admission_blocks_per_request) for a sliding one."""
    if g["window"] is None:
        return -(-ctx // g["block"])
    return -(-min(g["window"] - 1 + in_flight, ctx) // g["block"]) + 1


def request_pages(lay: dict, ctx: int, in_flight: int) -> int:
    """Blocks of the pool one request of ctx tokens holds in vLLM's start check: each group's pages, summed."""
    return sum(group_pages(g, ctx, in_flight) for g in lay["groups"])


def concurrency_blocks(lay: dict, ctx: int, in_flight: int) -> int:
    """The blocks a request counts in vLLM's "Maximum concurrency": packed, the groups' pages; before it (0.20.2
    get_max_concurrency_for_kv_cache_config) each group's pages x its summed page bytes, over the full-MLA group's."""
    if lay["packed"]:
        return request_pages(lay, ctx, in_flight)
    need = sum(group_pages(g, ctx, in_flight) * g["bytes"] for g in lay["groups"])
    return -(-need // lay["groups"][0]["bytes"])


def request_bytes(spec: LLMSpec, ctx: int, in_flight: int, draft_layers: int = 0, kind: str = "dsv4-tuples") -> int:
    """What vLLM's start check needs for one request (_max_memory_usage_bytes_from_groups): its pages x the block
    (0.20.2: x the tuples x the tuple's bytes, the same product)."""
    lay = layout(spec, draft_layers, kind)
    return request_pages(lay, ctx, in_flight) * lay["block_bytes"]


def pool(spec: LLMSpec, available: float, ctx: int, in_flight: int, draft_layers: int = 0,
         kind: str = "dsv4-tuples") -> dict:
    """{"blocks", "tokens", "concurrency", "request_bytes"} of `available` bytes: GPU KV cache size = concurrency x
    max_model_len (the figure of every vLLM that serves DeepSeek-V4)."""
    lay = layout(spec, draft_layers, kind)
    blocks = int(max(available, 0) // lay["block_bytes"])
    conc = blocks / concurrency_blocks(lay, ctx, in_flight)
    return {"blocks": blocks, "tokens": int(conc * ctx), "concurrency": conc,
            "request_bytes": request_pages(lay, ctx, in_flight) * lay["block_bytes"]}


def estimated_max_len(spec: LLMSpec, available: float, ctx: int, in_flight: int, draft_layers: int = 0,
                      kind: str = "dsv4-tuples") -> int:
    """A refusal's "estimated maximum model length": the longest length up to ctx whose request fits (binary search)."""
    from .vllm_max_len import longest_fitting
    lay = layout(spec, draft_layers, kind)
    return longest_fitting(lambda n: request_pages(lay, n, in_flight) * lay["block_bytes"] <= available, ctx)


def kv_detail(spec: LLMSpec, ctx: int, in_flight: int, draft_layers: int = 0, kind: str = "dsv4-tuples") -> dict:
    """cache.kv_cache's figures for one request on vLLM: the start check's bytes, per token the pool's bytes a block
    over its 256 tokens."""
    lay = layout(spec, draft_layers, kind)
    total = request_pages(lay, ctx, in_flight) * lay["block_bytes"]
    cells = -(-ctx // MLA_BLOCK) * MLA_BLOCK
    return {"per_token": lay["block_bytes"] // MLA_BLOCK, "full_layers": int(total), "sliding_layers": 0,
            "recurrent_state": 0, "total": int(total), "cells": cells, "sliding_cells": cells, "per_full_layer": 0,
            "dsv4_groups": len(lay["groups"]), "dsv4_block_bytes": lay["block_bytes"]}


def check_kv(kv: str | None, runtime: str) -> str | None:
    """vLLM's DeepSeek-V4 cache is fp8 (fp8_ds_mla): not given, fp8; another type refused with the reason."""
    if runtime != "vllm":
        return None
    k = str(kv or "fp8").lower()
    if k in ("auto", "default") or k.startswith("fp8"):
        return "fp8"
    raise UserError(f"KV cache type {kv!r}: vLLM's DeepSeek-V4 attention asserts an fp8 cache (DeepseekV4MLAAttention: "
                    "kv_cache_dtype must start with 'fp8', stored as fp8_ds_mla records of 584 bytes a token); later "
                    "builds' bf16 latent is not modelled: give --kv-dtype fp8")


def load_buffers(spec: LLMSpec, max_batched: int, drafter: bool = False, nbytes: int = 2) -> dict:
    """Bytes of the GPU buffers vLLM's DeepSeek-V4 allocates while it builds the model, inside "Model loading took"
    (gpu_model_runner.load_model measures torch's allocated memory around the load and the drafter's, vLLM 0.20.2
    :4788-4867; platforms/cuda.py:240-245), whole on every tensor-parallel GPU:
      - rope: each distinct rotary table, DeepseekV4Attention's get_rope(rope_dim = qk_rope_head_dim, theta =
        compress_rope_theta where c > 1 else rope_theta) (models/deepseek_v4.py:1011-1032; get_rope keeps one object a
        key, rope_theta in it, rotary_embedding/__init__.py:33-84), DeepseekV4ScalingRotaryEmbedding's fp32 cos_sin_cache
        of original_max_position_embeddings x factor rows x rope_dim (deepseek_scaling_rope.py:220-238); the MTP
        layers' theta counts where the drafter is loaded. A config without YaRN scaling: not counted (not read);
      - mtp_hidden: DeepseekV4Model._mtp_hidden_buffer, max_num_batched_tokens x hc_mult x hidden in the model's dtype
        (deepseek_v4.py:1300-1308; 0.20.2 allocates it with or without a drafter);
      - topk: topk_indices_buffer, max_num_batched_tokens x index_topk int32 (deepseek_v4.py:1252-1258), and the MTP
        predictor's own (deepseek_v4_mtp.py:161-167) where the drafter is loaded."""
    d = spec.dsv4
    mtp = tuple(d["mtp_ratios"][:spec.mtp_layers]) if drafter else ()
    tables = len({d["compress_rope_theta"] if r > 1 else d["rope_theta"] for r in tuple(d["ratios"]) + mtp})
    rope = tables * d["rope_rows"] * d["rope_dim"] * 4
    topk = (1 + bool(mtp)) * max_batched * d["index_topk"] * 4
    mtp_hidden = max_batched * d["hc_mult"] * spec.hidden * nbytes
    return {"rope": rope, "rope_tables": tables, "mtp_hidden": mtp_hidden, "topk": topk,
            "total": rope + mtp_hidden + topk}


def own_format(spec: LLMSpec, weights_dtype: str) -> None:
    """--weights-dtype fp8 is the checkpoint's own mix (fp8 matmuls, MXFP4 experts: the dataset's rows write it so);
    another format of DeepSeek-V4 (an NVFP4 or GGUF re-quantization) is not sized."""
    if str(weights_dtype).lower() in ("fp8", "fp4", "mxfp4", str(spec.quant or "").lower()):
        return None
    raise UserError(f"{spec.name}: --weights-dtype {weights_dtype}: kv sizes DeepSeek-V4's own checkpoint (fp8 matmuls "
                    "with MXFP4 or fp8 routed experts, as expert_dtype says); another quantization of it is not modelled")


def refuse_runtime(spec: LLMSpec, runtime: str) -> None:
    if spec.dsv4 and runtime != "vllm":
        raise UserError(f"{spec.name}: DeepSeek-V4's compressed attention is modelled for vLLM only (its cache groups "
                        f"read from vLLM's source); {runtime}'s DeepSeek-V4 cache (the compressed latents, the sliding "
                        "window, the indexer keys and the compressor states) and its pool were not read")


def _fp8(rows: int, cols: int) -> int:
    """An fp8 matmul as the checkpoint stores it: a byte a weight, a UE8M0 scale byte a 128 x 128 block."""
    return rows * cols + -(-rows // 128) * -(-cols // 128)


def _fp4(rows: int, cols: int) -> int:
    """An MXFP4 matmul: two weights a byte, a UE8M0 scale byte a 32 inputs."""
    return rows * cols // 2 + rows * -(-cols // 32)


def layer_bytes(cfg: dict, ratio: int, hash_routed: bool) -> tuple:
    """(bytes, parameters, routed-expert parameters) of one decoder layer as the checkpoint stores it (the tensor table
    of the Pro checkpoint's report, file id 62525154746: attention, compressor, indexer, experts, shared expert, router,
    hyper-connection mixers, norms)."""
    d, H, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["head_dim"]
    qr, og, olr = cfg["q_lora_rank"], cfg["o_groups"], cfg["o_lora_rank"]
    E, mi, ns = cfg["n_routed_experts"], cfg["moe_intermediate_size"], cfg.get("n_shared_experts", 1)
    ih, idim, hc = cfg.get("index_n_heads", 64), cfg.get("index_head_dim", 128), cfg.get("hc_mult", 4)
    mats = [(hd, d), (qr, d), (H * hd, qr), (og * olr, H * hd // og), (d, og * olr)]  # wkv, wq_a, wq_b, wo_a, wo_b
    mats += [(mi * ns, d), (mi * ns, d), (d, mi * ns)]  # the shared expert, fp8
    b = sum(_fp8(r, c) for r, c in mats) + 4 * H + 2 * (qr + hd + 2 * d)  # + attn_sink (f32), q / kv / attn / ffn norms
    p = sum(r * c for r, c in mats) + H + qr + hd + 2 * d
    if ratio > 1:  # the compressor: wkv and wgate (bf16) of coff x head_dim rows, ape (f32) of ratio rows, its norm
        coff = 1 + (ratio == 4)
        b += 2 * coff * hd * d * 2 + ratio * coff * hd * 4 + 2 * hd
        p += 2 * coff * hd * d + ratio * coff * hd + hd
    if ratio == 4:  # the indexer: wq_b (fp8), weights_proj (bf16), its compressor (bf16 / f32) and norm
        b += _fp8(ih * idim, qr) + ih * d * 2 + 2 * 2 * idim * d * 2 + 4 * 2 * idim * 4 + 2 * idim
        p += ih * idim * qr + ih * d + 2 * 2 * idim * d + 4 * 2 * idim + idim
    mix = (2 + hc) * hc  # hc_attn_* and hc_ffn_*: fn [mix, hc x d], base [mix], scale [3], f32
    b += 2 * 4 * (mix * hc * d + mix + 3)
    p += 2 * (mix * hc * d + mix + 3)
    fp4 = str(cfg.get("expert_dtype") or "fp4").lower() == "fp4"  # the Pro release's config has no expert_dtype: fp4
    experts = E * 3 * mi * d
    b += E * ((2 * _fp4(mi, d) + _fp4(d, mi)) if fp4 else (2 * _fp8(mi, d) + _fp8(d, mi)))
    router = E * d * 2 + (cfg["vocab_size"] * cfg["num_experts_per_tok"] * 8 if hash_routed else E * 4)  # + tid2eid / bias
    b += router
    p += experts + E * d + (cfg["vocab_size"] * cfg["num_experts_per_tok"] if hash_routed else E)
    return b, p, experts


def checkpoint_bytes(cfg: dict, ratios: tuple, n_layers: int, mtp: int = 0) -> tuple:
    """(bytes, parameters, routed-expert parameters) of the decoder (token table, head, final norm and hyper-connection
    head, the layers) and of mtp MTP layers (each a layer of its ratio, e_proj / h_proj fp8, three norms, its head mixer)."""
    d, V, hc = cfg["hidden_size"], cfg["vocab_size"], cfg.get("hc_mult", 4)
    head_mix = hc * hc * d * 4 + hc * 4 + 4
    b, p, e = 2 * V * d * 2 + 2 * d + head_mix, 2 * V * d + d + hc * hc * d + hc + 1, 0
    hashed = cfg.get("num_hash_layers", 0) or 0
    for i, r in enumerate(ratios[:n_layers + mtp]):
        lb, lp, le = layer_bytes(cfg, r, i < hashed and i < n_layers)
        b, p, e = b + lb, p + lp, e + le
        if i >= n_layers:
            b += 2 * _fp8(d, d) + 3 * 2 * d + head_mix
            p += 2 * d * d + 3 * d + hc * hc * d + hc + 1
    return b, p, e


def replicated_bytes(cfg: dict, ratios: tuple, n_layers: int) -> int:
    """Bytes of the decoder that every tensor-parallel GPU holds whole: fused_wqa_wkv (wq_a and wkv, disable_tp=True in
    vLLM's DeepseekV4Attention), the compressors' fused_wkv_wgate (disable_tp=True), ape and norm, the indexer (its
    compressor, and wq_b / weights_proj taken as V3.2's ReplicatedLinear: V4's classes for them were not read), the
    hyper-connection mixers, the router with its bias or hash table, the norms and the sinks; the rest (wq_b, wo_a,
    wo_b, the experts, the shared expert, the token table and head) is split."""
    d, H, hd, qr = cfg["hidden_size"], cfg["num_attention_heads"], cfg["head_dim"], cfg["q_lora_rank"]
    E, hc, ih, idim = cfg["n_routed_experts"], cfg.get("hc_mult", 4), cfg.get("index_n_heads", 64), cfg.get("index_head_dim", 128)
    mix = (2 + hc) * hc
    hashed = cfg.get("num_hash_layers", 0) or 0
    out = 2 * d + hc * hc * d * 4 + hc * 4 + 4  # the final norm and the head's mixer
    for i, r in enumerate(ratios[:n_layers]):
        out += _fp8(qr, d) + _fp8(hd, d) + 4 * H + 2 * (qr + hd + 2 * d) + 2 * 4 * (mix * hc * d + mix + 3)
        out += E * d * 2 + (cfg["vocab_size"] * cfg["num_experts_per_tok"] * 8 if i < hashed else E * 4)
        if r > 1:
            coff = 1 + (r == 4)
            out += 2 * coff * hd * d * 2 + r * coff * hd * 4 + 2 * hd
        if r == 4:
            out += _fp8(ih * idim, qr) + ih * d * 2 + 2 * 2 * idim * d * 2 + 4 * 2 * idim * 4 + 2 * idim
    return out


def _weights_fields(cfg: dict) -> dict:
    """cfg with every field the weights read checked as a whole number (a missing, null, text or zero one a UserError
    naming it, not a KeyError or a division by zero in layer_bytes); the optional ones at the released configs' values."""
    from .spec import _need
    out = dict(cfg)
    for key in ("q_lora_rank", "o_groups", "o_lora_rank", "n_routed_experts", "moe_intermediate_size",
                "num_experts_per_tok"):
        out[key] = _need(cfg, key, key)
    for key, default in (("n_shared_experts", 1), ("index_n_heads", 64), ("index_head_dim", 128), ("hc_mult", 4),
                         ("num_hash_layers", 0)):
        out[key] = _need(cfg, key, key, lo=0) if cfg.get(key) is not None else default
    return out


def from_config(cfg: dict, name: str) -> LLMSpec:
    """The spec of a DeepSeek-V4 config.json: the geometry, spec.dsv4 (the ratios, the indexer's width), the weights."""
    from .spec import _need
    L = _need(cfg, "layer count", "num_hidden_layers", hi=1024)
    d = _need(cfg, "hidden size", "hidden_size")
    H = _need(cfg, "attention head count", "num_attention_heads", hi=4096)
    hd = _need(cfg, "head_dim", "head_dim", hi=4096)
    window = _need(cfg, "sliding_window", "sliding_window", hi=1 << 20)
    V = _need(cfg, "vocabulary size", "vocab_size")
    if _int(cfg, "num_key_value_heads", default=1) != 1:
        raise UserError(f"{name}: DeepSeek-V4 keeps one latent head (num_key_value_heads 1)")
    ratios = read_ratios(cfg, L, name)
    cfg = _weights_fields(cfg)
    spec = LLMSpec(name=name, arch="deepseek_v4", layer_kinds=[FULL] * L, hidden=d, n_heads=H, n_kv_heads=1,
                   head_dim_k=hd, head_dim_v=hd, vocab=V, intermediate=_int(cfg, "moe_intermediate_size", default=0),
                   max_ctx=_int(cfg, "max_position_embeddings"), sliding_window=window)
    spec.dsv4 = {"ratios": ratios[:L], "mtp_ratios": ratios[L:], "index_dim": _int(cfg, "index_head_dim", default=128)}
    rs = cfg.get("rope_scaling") if isinstance(cfg.get("rope_scaling"), dict) else {}
    yarn = str(rs.get("type") or rs.get("rope_type") or "") in ("yarn", "deepseek_yarn")
    factor = rs.get("factor") if yarn and isinstance(rs.get("factor"), (int, float)) else 0
    theta = cfg.get("rope_theta", 10000)
    spec.dsv4.update(rope_theta=theta, compress_rope_theta=cfg.get("compress_rope_theta", theta),
                     rope_dim=_int(cfg, "qk_rope_head_dim", default=64), hc_mult=cfg["hc_mult"],
                     index_topk=_int(cfg, "index_topk", default=0),
                     rope_rows=int((_int(rs, "original_max_position_embeddings", default=0) or 0) * factor))
    spec.n_experts = _int(cfg, "n_routed_experts", default=0)
    spec.n_experts_per_tok = _int(cfg, "num_experts_per_tok", default=0)
    spec.moe_intermediate = _int(cfg, "moe_intermediate_size", default=0)
    spec.index_n_heads = 0  # the indexer's cache is one of the groups above, not cache.dsa_token_bytes'
    mtp = min(_int(cfg, "num_nextn_predict_layers", default=0) or 0, len(ratios) - L)
    spec.weights_bytes, spec.params, spec.expert_params = checkpoint_bytes(cfg, ratios, L)
    spec.linear_params = spec.params
    spec.dsv4["mtp_bytes"] = checkpoint_bytes(cfg, ratios, L, mtp)[0] - spec.weights_bytes if mtp else 0
    spec.dsv4["replicated"] = replicated_bytes(cfg, ratios, L)
    spec.mtp_layers = mtp
    spec.quant, spec.fp8_block = "fp8", True
    spec.weights_source = ("the checkpoint's tensors from its config.json (fp8 matmuls with UE8M0 block scales, "
                           f"{'MXFP4' if str(cfg.get('expert_dtype') or 'fp4').lower() == 'fp4' else 'fp8'} routed "
                           "experts, bf16 compressors and token tables, f32 mixers; deepseek_v4.checkpoint_bytes)")
    n4, n128 = ratios[:L].count(4), ratios[:L].count(128)
    spec.notes.append(f"DeepSeek-V4 layers: {n4} compressed 4x (latent, indexer key, two compressor states), {n128} "
                      f"compressed 128x (latent, compressor state), {L - n4 - n128} sliding only; every layer's "
                      f"{window}-token sliding latent; vLLM's fp8_ds_mla pages in its DeepSeek-V4 groups "
                      "(memory/llm/deepseek_v4.py)")
    return spec
