"""Hunyuan3D 2.x (image to 3-D shape), as ComfyUI 0.8.0 loads it: one checkpoint through ImageOnlyCheckpointLoader
(comfy_extras/nodes_video_model.py:10, load_checkpoint_guess_config with output_clipvision=True) holds three models:

- model.: the DiT. comfy/model_detection.py:497-524 reads it from the keys: "latent_in.weight" is 2.0's Hunyuan3Dv2
  (comfy/ldm/hunyuan3d/model.py, FLUX-style double and single blocks; 8 double blocks make supported_models'
  Hunyuan3Dv2mini), "t_embedder.mlp.2.weight" 2.1's HunYuanDiTPlain (comfy/ldm/hunyuan3dv2_1, 21 blocks, MoE in the
  last 6). memory_usage_factor 3.5 for all three configs (supported_models.py:1200-1247).
- conditioner.main_image_encoder.model.: the DINOv2 image encoder (clip_vision_prefix; clip_vision.py picks
  dino2_giant.json for 40 layers, dino2_large.json for 24). CLIPVisionEncode runs it once before sampling: counted with
  the encoders (role text_encoder), as a CLIP vision file is (wf66).
- vae.: the ShapeVAE (comfy/sd.py's branch for geo_decoder.cross_attn_decoder.ln_1.bias), run by VAEDecodeHunyuan3D.

VARIANTS is the one table of the variants: their ids, the ComfyUI config class each is, how the keys tell them apart.
families.py splits and detects through it; nothing here imports ComfyUI."""

FAMILY = "hunyuan3d"
DM_PREFIX = "model."
IMAGE_ENCODER_PREFIX = "conditioner.main_image_encoder.model."
# a key only a Hunyuan3D DiT has (model_detection.py:497, 512), under the checkpoint's model. prefix or without it
DM_KEYS = ("latent_in.weight", "t_embedder.mlp.2.weight")
VAE_KEY = "geo_decoder.cross_attn_decoder.ln_1.bias"  # comfy/sd.py's ShapeVAE branch
BLOCK_21 = "hunyuan3d-2.1"  # detect()'s arch block of 2.1's HunYuanDiTPlain (2.0's is "flux")
VAE_KIND = "hunyuan3d-shape"  # its families.vae_kind: decodes the 64-channel latent (latent_formats.Hunyuan3Dv2*)

# variant id -> (ComfyUI 0.8.0 model config class, the DiT's key it is detected by, double blocks it has (None: any))
# in the order detection tries them: 2.0 mini before 2.0 (supported_models' list puts Hunyuan3Dv2mini first)
VARIANTS = {
    "2.0 mini": ("Hunyuan3Dv2mini", "latent_in.weight", 8),
    "2.0": ("Hunyuan3Dv2", "latent_in.weight", None),
    "2.1": ("Hunyuan3Dv2_1", "t_embedder.mlp.2.weight", None),
}
CONFIGS = {cls: FAMILY for cls, _, _ in VARIANTS.values()}  # families.CONFIG_FAMILY takes these
# the DINOv2 comfy/clip_vision.py builds for each (its layer-count keys, the JSONs' widths): kind -> (layers, width)
DINOV2 = {"dinov2-giant": (40, 1536), "dinov2-large": (24, 1024)}


# CLIPVisionEncode's DINOv2 (the encode phase; phases.te_activation hands these kinds to dinov2_encode_bytes), read from
# ComfyUI 0.8.0's code: encode_image (clip_vision.py:56-59) hands it fp32 pixel_values of one 518 px image and
# comfy.ops.manual_cast casts each weight to fp32 for its op, so the whole forward is fp32 (4 bytes). Its peak is the last
# layer's feed-forward (image_encoders/dino2.py), with DINOV2_HIDDEN tensors d wide a token: the embeddings' output
# (bound in Dinov2Model.forward), the layer's input, the clone of the penultimate layer's output (intermediate_output -2,
# dino2.py:97-101), the residual after attention and norm2's output. The FFN (DINOV2_FFN, from dino2_*.json's
# use_swiglu_ffn): giant's SwiGLU at weights_out: weights_in's output (2 h), the product (h), weights_out's output (d)
# and its weight cast to fp32 (h x d); large's MLP at the GELU: fc1's output and the GELU's (f each). Plus the pixel
# values. Traced (benchmarks/trace_hunyuan3d.py "image_encode"): exactly these, 146,233,776 and 76,169,648 bytes (giant
# within 6,144: its layer scale's cast); first sight of the text encoders' rule +192.4 % and +417.4 %.
DINOV2_HIDDEN, DINOV2_PATCH = 5, 14
DINOV2_FFN = {"dinov2-giant": ("swiglu", 4096), "dinov2-large": ("mlp", 4096)}  # kind -> (FFN, its hidden width)


def dinov2_encode_bytes(kind: str, table: dict, tokens: int) -> int:
    """Activation bytes of one image through the DINOv2 (CLIPVisionEncode), `tokens` patches + the class token; widths
    read from the table where it has them (cls_token, the first layer's FFN), else DINOV2 / DINOV2_FFN."""
    d = (table.get("embeddings.cls_token") or (None, (DINOV2.get(kind, (0, 1536))[1],)))[1][-1]
    ffn, h = DINOV2_FFN.get(kind, ("mlp", 4 * d))
    if "encoder.layer.0.mlp.weights_in.weight" in table:
        ffn, h = "swiglu", table["encoder.layer.0.mlp.weights_in.weight"][1][0] // 2
    elif "encoder.layer.0.mlp.fc1.weight" in table:
        ffn, h = "mlp", table["encoder.layer.0.mlp.fc1.weight"][1][0]
    per = (DINOV2_HIDDEN + 1) * d + 3 * h if ffn == "swiglu" else DINOV2_HIDDEN * d + 2 * h
    px = int(round((tokens - 1) ** 0.5)) * DINOV2_PATCH
    return 4 * (tokens * per + (h * d if ffn == "swiglu" else 0) + 3 * px * px)


def _count(table, prefix: str) -> int:
    n = len(prefix)
    return len({k[n:].split(".", 1)[0] for k in table if k.startswith(prefix)})


def is_checkpoint(table: dict) -> bool:
    """A Hunyuan3D checkpoint: a DiT key under model. (model_detection's fallback prefix for it)."""
    return any(DM_PREFIX + k in table for k in DM_KEYS)


def split(table: dict) -> tuple[dict, list[dict]]:
    """(the table less the DiT and the DINOv2, [those two as components: the DiT's keys without model., the encoder's
    without its prefix]); the table itself and [] for any other file. vae.* stays for families.PREFIXES."""
    if not is_checkpoint(table):
        return table, []
    dm, enc, rest = {}, {}, {}
    for k, v in table.items():
        if k.startswith(IMAGE_ENCODER_PREFIX):
            enc[k[len(IMAGE_ENCODER_PREFIX):]] = v
        elif k.startswith(DM_PREFIX):
            dm[k[len(DM_PREFIX):]] = v
        else:
            rest[k] = v
    parts = [{"role": "diffusion_model", "kind": None, "table": dm}]
    if enc:
        parts.append({"role": "text_encoder", "kind": dinov2_kind(enc), "table": enc})
    return rest, parts


def dinov2_kind(t: dict) -> str:
    """dinov2-giant / dinov2-large by the layer key comfy/clip_vision.py tests (encoder.layer.39 / .23), else dinov2."""
    for kind, (layers, _) in DINOV2.items():
        if f"encoder.layer.{layers - 1}.layer_scale2.lambda1" in t:
            return kind
    return "dinov2"


def detect(t: dict) -> dict | None:
    """{family, variant, arch} of a Hunyuan3D DiT's table (keys without model.), else None. arch: hidden (the token
    width), depth (blocks in all), heads 16 (model_detection.py:505, 519), ffn (mlp_ratio 4.0), context_dim (the image
    tokens' width), block: "flux" for 2.0's double + single blocks, "hunyuan3d-2.1" for 2.1's cross-attention blocks."""
    for variant, (_, key, double) in VARIANTS.items():
        if key not in t:
            continue
        if key == "latent_in.weight":
            n_double, n_single = _count(t, "double_blocks."), _count(t, "single_blocks.")
            if double is not None and n_double != double:
                continue
            d = t[key][1][0]
            ctx = t.get("cond_in.weight", (None, (d, 1536)))[1][1]
            arch = {"hidden": d, "depth": n_double + n_single, "double": n_double, "single": n_single, "heads": 16,
                    "ffn": 4 * d, "block": "flux", "context_dim": ctx}
        else:  # Lumina 2 / Z-Image have x_embedder and t_embedder too, but layers., not blocks.N.attn2
            if "x_embedder.weight" not in t or "blocks.0.attn2.to_k.weight" not in t:
                continue
            d = t["x_embedder.weight"][1][0]
            ctx = t.get("blocks.0.attn2.to_k.weight", (None, (d, 1024)))[1][1]
            arch = {"hidden": d, "depth": _count(t, "blocks."), "heads": 16, "ffn": 4 * d, "block": BLOCK_21,
                    "context_dim": ctx}
        return {"family": FAMILY, "variant": variant, "arch": arch}
    return None


# Sampling: one model call's activations (phases.sample_parts hands this family to sample_bytes), read from ComfyUI
# 0.8.0's code, not fitted; each term is a tensor the fake-tensor trace of that call lists live at its peak
# (benchmarks/trace_hunyuan3d.py, h3d64). Per sample, in the compute dtype unless said:
# - 2.0 / mini (ldm/hunyuan3d/model.py:77-140, flux/layers.py:325-345 SingleStreamBlock): the first single block's MLP
#   GELU. Per joint token (latent + context, model.py:123 cat): the block's input, the attention's output, linear1's
#   output (3d + f: qkv and the MLP half) and the GELU's (f): FLUX_HIDDEN d + 3d + 2f. Per context token besides: the
#   last double block's text stream (txt, still bound in _forward), d.
# - 2.1 (ldm/hunyuan3dv2_1/hunyuandit.py:605-659), U-shaped: blocks 0 .. depth//2 - 1 push their outputs on skip_stack
#   (l.652), each block after depth//2 pops one (l.636) and concatenates it with its input (l.492). The first skip block's
#   MLP GELU (block 11 of 21) is the peak. Per token of the sequence (the latent's and the time token, l.620): the
#   depth//2 skip outputs (those left on the stack and the one popped, held as skip_input), and SKIP_BLOCK_HIDDEN d: the
#   block's input (block depth//2's output), the cat (2 d, still bound as `combined`, l.492), the residual stream,
#   self_attn_out (l.501, bound to the block's end) and the MLP's input (norm3, l.508); fc1's and the GELU's outputs
#   (f each). Per latent token x_embedded (l.618, bound in forward), d. The later blocks hold fewer skips (one fewer
#   each); the MoE blocks (the last 6) add 2 d in the routing but hold 4 or more fewer: less. The context is
#   cross-attended, not in the sequence: per context token the cond/uncond swap (l.610, context_dim wide).
# - both, per context token: the sampler's c_crossattn in fp32 (CONTEXT_IN_BYTES: the DINOv2 runs in fp32,
#   clip_vision.py:58 pixel_values.float() under manual_cast) and model_base's cast of it (model_base.py:186).
# The trace's at 3072 tokens lists exactly these (2.1: blocks.11.mlp.gelu, 2 x [2, 3073, 8192] + [2, 3073, 4096] + 14 x
# [2, 3073, 2048] + [2, 3072, 2048] + the context's three copies; 2.0: single_blocks.0.mlp_act, [8884, 7168] +
# [2, 4442, 4096] + 2 x [2, 4442, 1024] + [2, 1370, 1024] + the context's two). The h3d63 rows (3072, 4096 tokens) were
# seen before this was written: a regression set; 2048, 5120 and batch 2 were scored first (first_sight.added).
FLUX_HIDDEN, SKIP_BLOCK_HIDDEN, CONTEXT_IN_BYTES = 2, 6, 4
CONTEXT_DIM = {"flux": 1536, BLOCK_21: 1024}  # model_detection.py's context widths, when unread


def sample_units(arch: dict) -> float:
    """Elements alive per token of the sequence at the sampling peak, in units of the hidden width (see above)."""
    d = arch.get("hidden") or 1
    f = arch.get("ffn") or 4 * d
    if arch.get("block") == BLOCK_21:
        return (arch.get("depth") or 21) // 2 + SKIP_BLOCK_HIDDEN + 2 * f / d
    return FLUX_HIDDEN + 3 + 2 * f / d


def sample_bytes(arch: dict, lat: dict, b_eff: int, bc: int) -> int:
    """Activation bytes of one model call on b_eff samples (cond and uncond batched count 2) of the latent `lat`
    (phases.latent_geometry: image_tokens the latent's, text_tokens the DINOv2 context's) in a dtype of bc bytes;
    without the sampler state (phases.sampler_state_bytes)."""
    d = arch.get("hidden") or 1024
    n, ctx = lat["image_tokens"], lat["text_tokens"]
    ctx_in = arch.get("context_dim") or CONTEXT_DIM.get(arch.get("block"), 1536)
    if arch.get("block") == BLOCK_21:
        per = (n + 1) * sample_units(arch) * d + n * d + ctx * ctx_in  # sequence, x_embedded, the context's swap
    else:
        per = (n + ctx) * sample_units(arch) * d + ctx * d  # joint tokens, the text stream
    per = per * bc + ctx * ctx_in * (CONTEXT_IN_BYTES + bc)  # the sampler's fp32 context and its cast
    return int(b_eff * per)


# With the scores held whole (the math SDPA kernel; the sample_naive_attention phase) 2.1 peaks at the first skip block's
# self-attention softmax (blocks.11.attn1): the scores and their softmax ([2B, heads, n + 1, n + 1] each) beside, per
# sequence token, NAIVE_LESS d fewer than sample_units' MLP peak holds: the depth//2 skips and the input, the cat (2 d),
# skip_norm's and norm1's outputs, and in Attention.forward (hunyuandit.py:390-418) the qkv cat (3 d), value's reshape
# copy, q_norm's and k_norm's outputs and SDPA's scaled q (7 d): 22 d against 24 d. Its cross-attention's scores
# ((n + 1) x context) come later and are smaller. Traced (hunyuan3d_trace.json "math", 2.1 at 3072): first sight +61.2 %
# (scores over 3072 + 1370 joint tokens, 60 % of the rest). 2.0's single blocks attend over the joint sequence: the
# generic joint figure (+1.5 % at first sight) stands.
NAIVE_LESS = 2


def naive_extra(arch: dict, lat: dict, b_eff: int, bc: int) -> int | None:
    """2.1: what the math-attention peak holds beyond sample_bytes (the scores, less NAIVE_LESS d a sequence token);
    phases.naive_total adds it. None for 2.0 (the generic joint-token figure)."""
    if arch.get("block") != BLOCK_21:
        return None
    n, d, heads = lat["image_tokens"] + 1, arch.get("hidden") or 2048, arch.get("heads") or 16
    return int(b_eff * bc * (2 * heads * n * n - NAIVE_LESS * n * d))


def sample_how(arch: dict, lat: dict) -> str:
    """The sample row's assumption line: units and the tokens they apply to (2.1: its sequence, the context apart)."""
    n, ctx = lat["image_tokens"], lat["text_tokens"]
    seq = f"{n + 1} sequence tokens (the latent's and the time token), {ctx} context tokens cross-attended" \
        if arch.get("block") == BLOCK_21 else f"{n + ctx} joint tokens ({n} latent + {ctx} context)"
    return f"{sample_units(arch):.1f} x hidden {arch.get('hidden') or 1024} per token, {seq}"


# VAEDecodeHunyuan3D (comfy_extras/nodes_hunyuan3d.py:103-120; num_chunks and octree_resolution, its defaults) runs
# comfy.sd.VAE.decode -> ShapeVAE.decode (ldm/hunyuan3d/vae.py:966): post_kl and the 16-layer transformer over the
# latent tokens, then VanillaVolumeDecoder (l.427-457) queries the (octree + 1)^3 grid points num_chunks at a time.
# Activations of one sample at its peak (the geo decoder's MLP of one chunk), fp16, from the traces of ComfyUI 0.8.0's
# class (benchmarks/results/hunyuan3d_trace.json "decode"; first sight +21734 %, the generic video heuristic):
#   per query point of a chunk 22,532 bytes (16000 - 8000 chunks at octree 32: 367,476,294 - 187,220,294 = 180,256,000
#   over 8000), per latent token 2,176 (4096 - 3072 tokens: 2,228,224 over 1024), per grid point 8 (the fp16 xyz grid,
#   6, and the fp16 logits, 2: octree 64 - 32, 1,912,128 over 65^3 - 33^3 = 238,688 points). Fitted on those three
#   moves and the octree-32 base; held out: the templates' 3072 / 8000 / 256 (+0.06 %) and batch 2 (+0.06 %).
DECODE_QUERY, DECODE_TOKEN, DECODE_GRID = 22532, 2176, 8
NUM_CHUNKS, OCTREE = 8000, 256  # the node's defaults, what every template sets
WIDGETS = {"VAEDecodeHunyuan3D": ("num_chunks", "octree_resolution")}  # in UI order: what workflow.nodes() reads
# ComfyUI's own memory_used_decode for the ShapeVAE (comfy/sd.py:570-579): batch x 64 x resolution x dtype bytes x
# (1 + 2 x 16) for the latent [B, 64, resolution]; spec.VAE's heuristic for this kind reads it per sample
COMFY_DECODE = 64 * (1 + 2 * 16)


def decode_bytes(latent_shape, dtype_bytes: int = 2, num_chunks: int = NUM_CHUNKS, octree: int = OCTREE) -> int:
    """Activation bytes of decoding ONE sample of a [B, 64, 1, resolution] latent (spec.FAMILY's w x 1) with the
    ShapeVAE at VAEDecodeHunyuan3D's num_chunks and octree_resolution, in a dtype of dtype_bytes (traced in fp16)."""
    grid = (int(octree) + 1) ** 3
    per = DECODE_QUERY * min(int(num_chunks), grid) + DECODE_TOKEN * int(latent_shape[-1]) + DECODE_GRID * grid
    return int(per * dtype_bytes // 2)


def decode_options(w: dict) -> dict:
    """VAEDecodeHunyuan3D's vae_options as the node hands them to VAE.decode (nodes_hunyuan3d.py:118): its widgets where
    they are whole numbers in the node's range (num_chunks 1000-500000, octree_resolution 16-512), else its defaults."""
    out = {}
    for k, default, lo, hi in (("num_chunks", NUM_CHUNKS, 1000, 500000), ("octree_resolution", OCTREE, 16, 512)):
        v = (w or {}).get(k)
        out[k] = v if isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi else default
    return out


def decode_phase(latent_shape, dtype_bytes: int, batch: int, options=None) -> dict:
    """vae.phase's figures for the ShapeVAE: VAE.decode (comfy/sd.py:788-806) runs `batch` samples at once (the batch
    ComfyUI picks from memory_used_decode) with the node's num_chunks and octree_resolution; no pixel tiles: the volume
    is queried num_chunks grid points at a time. ComfyUI's retry after an out-of-memory error (sd.py:815-818,
    decode_tiled_1d: 128-token tiles of the latent, decoded without the node's vae_options) is not counted."""
    o = decode_options(options)
    per = decode_bytes(latent_shape, dtype_bytes, o["num_chunks"], o["octree_resolution"])
    b = int(latent_shape[0])
    return {"per_sample": per, "bytes": batch * per, "batch": batch, "tiled_bytes": None, "fallback_bytes": None,
            "tiled": False, "fallback": False, "conv_workspace": 0, "allocator_slack": 0, "cached_slack": 0,
            "how": f"VAEDecodeHunyuan3D, {batch} of {b} sample(s) at once: the ShapeVAE queries "
                   f"{(o['octree_resolution'] + 1) ** 3:,} grid points (octree_resolution {o['octree_resolution']}) "
                   f"{min(o['num_chunks'], (o['octree_resolution'] + 1) ** 3):,} at a time (num_chunks {o['num_chunks']}); "
                   "no pixel tiles (VAE Decode (Tiled) and ComfyUI's tiled retry do not apply)"}


def decode_note(w: dict) -> list[str]:
    """The assumption line for a VAEDecodeHunyuan3D whose widgets are not its defaults (the estimate counts them) or are
    out of the node's range (counted at the defaults)."""
    got = (w.get("num_chunks"), w.get("octree_resolution"))
    if got in ((NUM_CHUNKS, OCTREE), (None, None)):
        return []
    o = decode_options(w)
    if (o["num_chunks"], o["octree_resolution"]) == got:
        return [f"VAEDecodeHunyuan3D: num_chunks {got[0]}, octree_resolution {got[1]} counted (the node's defaults: "
                f"{NUM_CHUNKS}, {OCTREE}): per sample {DECODE_QUERY:,} bytes a query point of a chunk and {DECODE_GRID} a "
                "grid point ((octree_resolution + 1)^3)"]
    return [f"VAEDecodeHunyuan3D: num_chunks {got[0]}, octree_resolution {got[1]} are not values the node takes; counted "
            f"at {o['num_chunks']}, {o['octree_resolution']}"]


# Hunyuan3Dv2ConditioningMultiView (nodes_hunyuan3d.py:62-95) concatenates the DINOv2 tokens of the views wired to it
# (front, left, back, right): up to 4 x 1370 context tokens (spec.FAMILY's txt is one view's), which 2.0's double
# blocks attend to jointly with the latent. Traced: 554.3 MiB at 3072 tokens with four views (benchmarks/results/
# hunyuan3d_trace.json "multiview"; first sight -53.8 % at one view's tokens, -12.4 % as joint tokens only, +0.9 % since
# sample_bytes counts each context token's fp32 copy, cast and text stream). The reader does not see which inputs
# are wired: all four are counted (the multi-view templates wire four)
MULTIVIEW, VIEWS, VIEW_TOKENS = "Hunyuan3Dv2ConditioningMultiView", 4, 1370
GRAPH_NODES = ("VAEDecodeHunyuan3D", MULTIVIEW)  # the graph's Hunyuan3D nodes workflow.read hands to node_note


def node_note(t: str, w: dict, graph: dict) -> list[str]:
    """workflow.read's call for a Hunyuan3D node: the multi-view conditioning sets the context tokens (graph
    "text_tokens", the policy's text_tokens), the decode its num_chunks and octree_resolution (graph "vae_options", the
    policy's vae_options); the assumption lines."""
    if t == MULTIVIEW:
        graph["text_tokens"] = VIEWS * VIEW_TOKENS
        return [f"{MULTIVIEW}: counted with its {VIEWS} views wired, {VIEWS} x {VIEW_TOKENS} DINOv2 tokens the DiT attends "
                "to (fewer views hold less)"]
    got, had = decode_options(w), graph.get("vae_options")  # the policy's vae_options: vae.phase hands them to decode_phase
    if had is None or _options_bytes(got) > _options_bytes(had):  # several decodes: the one that needs the most (rev64b #2)
        graph["vae_options"] = got
    return decode_note(w)


def _options_bytes(o) -> int:
    """A decode's bytes at these options on one 4096-token latent: what orders two nodes' options (the latent's own term
    is the same for both)."""
    return decode_bytes((1, 64, 1, 4096), 2, o["num_chunks"], o["octree_resolution"])


IMAGE_ONLY = "ImageOnlyCheckpointLoader"


def image_only(files) -> tuple[list, list]:
    """workflow.read()'s found files [(path, loader, widget)] less those ImageOnlyCheckpointLoader names that are not a
    Hunyuan3D checkpoint (SVD's: the estimate does not size it), and those as [(loader, {widget: file name})] for
    model_files.not_followed's named line. A file whose header cannot be read stays (the estimate reports it)."""
    from .headers import read_tensors
    keep, unsized = [], []
    for f in files:
        path, loader, widget = f
        if loader == IMAGE_ONLY:
            try:
                ours = is_checkpoint(read_tensors(path))
            except Exception:  # noqa: BLE001 - formula.from_files reports an unreadable file as it does for any loader
                ours = True
            if not ours:
                import os
                unsized.append((loader, {widget: os.path.basename(path)}))
                continue
        keep.append(f)
    return keep, unsized
