"""What a tensor table is: split a file into components (diffusion model, each text encoder, VAE) by key
names, and name the diffusion model's family and size from keys and shapes. The detection keys follow
ComfyUI's comfy/model_detection.py (and the diffusers names where common); nothing here imports ComfyUI."""
import re
from collections import Counter

from . import hunyuan3d as H3D, image_encoder
from .headers import table_bytes
from .spec import DEFAULT_ARCH  # one place for a family's fixed block kind

# checkpoint prefixes -> (role, text encoder kind or None: classify the sub-table)
PREFIXES = (
    ("model.diffusion_model.", "diffusion_model", None),
    ("first_stage_model.", "vae", None),
    ("vae.", "vae", None),
    ("cond_stage_model.transformer.", "text_encoder", "clip-l"),
    ("cond_stage_model.model.", "text_encoder", "clip-h"),
    ("conditioner.embedders.0.transformer.", "text_encoder", "clip-l"),
    ("conditioner.embedders.1.model.", "text_encoder", "clip-g"),
    ("conditioner.embedders.0.model.", "text_encoder", "clip-g"),
    ("text_encoders.", "text_encoder", None),
    ("cond_stage_model.", "text_encoder", None),
)
_ALL_PREFIXES = tuple(p for p, _, _ in PREFIXES)
OTHER_KEYS = re.compile(r"^(alphas_cumprod|alphas_cumprod_prev|betas|log_one_minus_alphas_cumprod|model_ema\.|"
                        r"posterior_|sqrt_|lvlb_weights|logvar|denoiser\.|__)")

# Family ids, the one list (hyphenated; every module, node and report uses these); "unknown" when nothing matches.
FAMILIES = ("sd1", "sd2", "sdxl", "sd3", "flux1", "flux2", "chroma", "qwen-image", "hidream", "lumina2", "z-image",
            "wan21", "wan22", "hunyuan-video", "hunyuan-video-15", "hunyuan-image", "ltxv", "ltx-2", "mochi", "cosmos", "pixart", "auraflow",
            "hunyuan-dit", "hunyuan3d", "unknown")

# ComfyUI model config classes (comfy/supported_models.py, 0.8.0) -> family id: the one table. Used where the
# keys alone do not tell (a custom loader renamed them) and to name a loaded model in reports.
CONFIG_FAMILY = {
    "SD15": "sd1", "SD20": "sd2", "SD21UnclipL": "sd2", "SD21UnclipH": "sd2", "SDXL": "sdxl", "SDXLRefiner": "sdxl",
    "SSD1B": "sdxl", "Segmind_Vega": "sdxl", "KOALA_700M": "sdxl", "KOALA_1B": "sdxl", "SD3": "sd3",
    "Flux": "flux1", "FluxSchnell": "flux1", "FluxInpaint": "flux1", "Flux2": "flux2", "Chroma": "chroma",
    "ChromaRadiance": "chroma", "QwenImage": "qwen-image", "HiDream": "hidream", "Lumina2": "lumina2",
    "ZImage": "z-image", "WAN21_T2V": "wan21", "WAN21_I2V": "wan21", "WAN21_Vace": "wan21",
    "WAN21_FunControl2V": "wan21", "WAN21_Camera": "wan21", "WAN21_HuMo": "wan21", "WAN22_T2V": "wan22",
    "WAN22_Camera": "wan21", "WAN22_S2V": "wan21", "WAN22_Animate": "wan21", "HunyuanVideo": "hunyuan-video",
    "HunyuanVideoI2V": "hunyuan-video", "HunyuanVideoSkyreelsI2V": "hunyuan-video", "HunyuanVideo15": "hunyuan-video-15",
    "HunyuanImage21": "hunyuan-image", "LTXV": "ltxv", "LTXAV": "ltx-2", "GenmoMochi": "mochi", "CosmosT2V": "cosmos",
    "CosmosI2V": "cosmos", "CosmosT2IPredict2": "cosmos", "CosmosI2VPredict2": "cosmos", "PixArtAlpha": "pixart",
    "PixArtSigma": "pixart", "AuraFlow": "auraflow", "HunyuanDiT": "hunyuan-dit", "HunyuanDiT1": "hunyuan-dit",
    **H3D.CONFIGS,  # Hunyuan3Dv2, Hunyuan3Dv2mini, Hunyuan3Dv2_1: hunyuan3d.VARIANTS
}
# prefixes for subclasses not listed, tried longest first. "WAN": every Wan class subclasses WAN21_T2V and keeps
# its Wan 2.1 latent; only WAN22_T2V (the 5B TI2V) sets latent_formats.Wan22, so a WAN22_ name is no sign of wan22
_CONFIG_PREFIXES = sorted(list(CONFIG_FAMILY.items()) + [
    ("WAN", "wan21"), ("SDXL", "sdxl"), ("SD15", "sd1"), ("SD20", "sd2"), ("SD3", "sd3"),
    ("Flux2", "flux2"), ("Flux", "flux1"), ("HunyuanVideo", "hunyuan-video"), ("HunyuanImage", "hunyuan-image"),
    ("LTXV", "ltxv"), ("QwenImage", "qwen-image"), ("Chroma", "chroma"), ("Lumina2", "lumina2"), ("Cosmos", "cosmos"),
    ("PixArt", "pixart"), ("HunyuanDiT", "hunyuan-dit"), ("HiDream", "hidream")], key=lambda kv: -len(kv[0]))


def family_for_config(class_name: str | None) -> str | None:
    """The family id of a ComfyUI model config class name (exact, then the longest known prefix); None if unknown."""
    if not class_name:
        return None
    if class_name in CONFIG_FAMILY:
        return CONFIG_FAMILY[class_name]
    for prefix, fam in _CONFIG_PREFIXES:
        if class_name.startswith(prefix):
            return fam
    return None


# LTX-2's single-file checkpoint (ltx-2-19b-*.safetensors) holds, besides the diffusion model and its video VAE
# (vae.*: ComfyUI 0.8.0 supported_models.py:823 vae_key_prefix, sd.py:1405-1408), parts other loaders take from it:
# - the text side: text_embedding_projection.aggregate_embed.weight and model.diffusion_model.{video,audio}_
#   embeddings_connector.*. LTXAVTextEncoderLoader (comfy_extras/nodes_lt_audio.py:194-201) passes the file to
#   load_clip beside Gemma, and LTXAVTEModel.load_sd (text_encoders/lt.py:111-119, the renames at l.115) takes them
#   into its own modules (LTX2_TEXT_KEYS). The diffusion model (av_model.py:322 LTXAVModel) has no connectors:
#   load_model_weights (model_base.py:301-314, load_state_dict strict=False) leaves them out ("unet unexpected"),
#   so they are not the diffusion model's bytes.
# - the audio VAE (audio_vae.*) and its vocoder (vocoder.*): LTXVAudioVAELoader (nodes_lt_audio.py:28-31) builds
#   AudioVAE, which takes exactly these two prefixes (vae/audio_vae.py:150-151). It runs at LTXVAudioVAEDecode, after
#   sampling, in a phase of its own (audio_decode.py, ltx63): role "other" (resident 0 in the other phases), listed
#   with its bytes. vocoder.* alone is no sign:
#   Ace-Step's and MMAudio's VAE files hold vocoder.* as their VAE's (sd.py:585, 609); only beside audio_vae.* is it
#   LTX-2's.
LTX2_TEXT_KEYS = (("text_embedding_projection.aggregate_embed.weight", "text_embedding_projection.weight"),
                  ("model.diffusion_model.video_embeddings_connector.", "video_embeddings_connector."),
                  ("model.diffusion_model.audio_embeddings_connector.", "audio_embeddings_connector."))
LTX2_AUDIO_PREFIXES = ("audio_vae.", "vocoder.")
LTX2_AUDIO_KIND = "ltx-2 audio VAE + vocoder"  # decoded in a phase of its own (audio_decode.py; ltx63)
# LTX-2's latent upscale model (latent_upscale_models/): LatentUpscaleModelLoader takes a file with this key as
# LatentUpsampler (0.8.0 nodes_hunyuan.py:205); it runs in its own phase (latent_upscale.py, ltx64): role "other"
LTX2_UPSCALER_KEY = "post_upsample_res_blocks.0.conv2.bias"
LTX2_UPSCALER_KIND = "ltx-2 latent upscaler"
_LTX2_DM = ("audio_adaln_single.linear.weight", "model.diffusion_model.audio_adaln_single.linear.weight")
_LTX2_TEXT_OLD = tuple(o for o, _ in LTX2_TEXT_KEYS)


def _ltx2_parts(table: dict) -> tuple[dict, list[dict]]:
    """(the table less LTX-2's text and audio parts, [those parts as components]); the table itself when it holds none.
    A file without the model.diffusion_model. prefix names the connectors as LTXAVTEModel does (load_sd's sdo = sd,
    lt.py:116-117): they are pulled from it only beside an LTX-2 diffusion model (_LTX2_DM), so a connectors-only file
    stays whole (text_encoder_kind "ltx-2-connectors")."""
    audio = any(k.startswith("audio_vae.") for k in table)
    dm = any(k in table for k in _LTX2_DM)
    if not audio and not dm and not any(k.startswith(_LTX2_TEXT_OLD) for k in table):
        return table, []
    text, sound, rest = {}, {}, {}
    for name, t in table.items():
        if audio and name.startswith(LTX2_AUDIO_PREFIXES):
            sound[name] = t
            continue
        for old, new in LTX2_TEXT_KEYS + (tuple((n, n) for _, n in LTX2_TEXT_KEYS) if dm else ()):
            if name.startswith(old):
                text[new + name[len(old):]] = t
                break
        else:
            rest[name] = t
    parts = [{"role": "text_encoder", "kind": "ltx-2-connectors", "table": text}] if text else []
    parts += [{"role": "other", "kind": LTX2_AUDIO_KIND, "table": sound}] if sound else []
    return rest, parts


def split_components(table: dict, source: str = "") -> list[dict]:
    """[{role, kind, table, bytes, source}] for one file or one loaded model's state dict."""
    groups, rest = {}, {}
    table = {k: v for k, v in table.items() if not _is_scaled_fp8_marker(k)}
    if LTX2_UPSCALER_KEY in table:  # a latent upscale model, whole: not a diffusion model (latent_upscale.py)
        return [{"role": "other", "kind": LTX2_UPSCALER_KIND, "table": table, "bytes": table_bytes(table), "source": source}]
    table, ltx2 = _ltx2_parts(table)
    table, h3d = H3D.split(table)  # a Hunyuan3D checkpoint's DiT (model.) and DINOv2 image encoder (hunyuan3d.py)
    for name, t in table.items():
        if not name.startswith(_ALL_PREFIXES):
            rest[name] = t
            continue
        for prefix, role, kind in PREFIXES:
            if name.startswith(prefix):
                key = name[len(prefix):]
                sub = prefix
                if prefix == "text_encoders.":  # text_encoders.<name>.<key>
                    head, _, key = key.partition(".")
                    sub = prefix + head + "."
                groups.setdefault((sub, role, kind), {})[key] = t
                break
        else:
            rest[name] = t
    out = list(ltx2) + h3d
    other = {k: v for k, v in rest.items() if OTHER_KEYS.match(k)}
    rest = {k: v for k, v in rest.items() if k not in other}
    if rest:
        out.append(_classify_whole(rest))
    for (prefix, role, kind), sub in groups.items():
        if role == "text_encoder":
            kind = kind or text_encoder_kind(sub)
        elif role == "vae":
            kind = vae_kind(sub)
        out.append({"role": role, "kind": kind, "table": sub})
    if other:
        out.append({"role": "other", "kind": "unused buffers (not loaded)", "table": other})
    for c in out:
        c["bytes"] = table_bytes(c["table"])
        c["source"] = source
        if c["role"] == "diffusion_model":
            c.update(detect_family(c["table"]))
            if c.get("family") == "wan21" and c["arch"].get("hidden") == 5120 and WAN22_NAME.search(source or ""):
                _mark_wan22_a14b(c)
    order = {"diffusion_model": 0, "text_encoder": 1, "vae": 2, "other": 3}
    return sorted(out, key=lambda c: order[c["role"]])


def _is_scaled_fp8_marker(name: str) -> bool:
    """A scaled fp8 file's "<prefix>scaled_fp8" marker (0 or 2 elements): ComfyUI reads its dtype and drops it
    (0.8.0 comfy/utils.py:1217-1234 convert_old_quants), so it is no weight of any component."""
    return name == "scaled_fp8" or name.endswith(".scaled_fp8")


def _classify_whole(table: dict) -> dict:
    kind = text_encoder_kind(table)
    if kind in LLM_KINDS:  # an LLM with its vision tower inside (Gemma 3's vision_model.*) is a text encoder
        return {"role": "text_encoder", "kind": kind, "table": table}
    if image_encoder.is_clip_vision(table):  # an I2V model's image encoder: counted with the encoders
        width = next((s[-1] for k, (_, s) in table.items() if k.endswith(("class_embedding", "cls_embedding"))), 0)
        return {"role": "text_encoder", "kind": image_encoder.KIND if width == image_encoder.WIDTH else "clip-vision",
                "table": table}
    if kind:
        return {"role": "text_encoder", "kind": kind, "table": table}
    vk = vae_kind(table) if _looks_like_vae(table) else None
    if vk:
        return {"role": "vae", "kind": vk, "table": table}
    return {"role": "diffusion_model", "kind": None, "table": table}


# top-level heads that are one encoder's parts, grouped with their full keys: LTX-2's LTXAVTEModel holds Gemma 3 12B
# as gemma3_12b.* beside its projection and two connectors (ComfyUI 0.8.0 text_encoders/lt.py:66-87)
SHARED_HEADS = {h: "ltx-2-connectors" for h in
                ("text_embedding_projection", "audio_embeddings_connector", "video_embeddings_connector")}


def split_by_head(table: dict, role: str) -> list[dict]:
    """A loaded multi-encoder CLIP (keys "clip_l.transformer...", "t5xxl.transformer...") as one component
    per encoder; anything that does not split cleanly stays one component."""
    groups = {}
    for k, v in table.items():
        head, _, rest = k.partition(".")
        if head in SHARED_HEADS:
            groups.setdefault(SHARED_HEADS[head], {})[k] = v
        else:
            groups.setdefault(head, {})[rest] = v
    out = []
    for head, sub in groups.items():
        kind = text_encoder_kind(sub) if role == "text_encoder" else vae_kind(sub)
        if kind is None and len(groups) > 1 and table_bytes(sub) > (1 << 20):
            return [{"role": role, "kind": text_encoder_kind(table) if role == "text_encoder" else vae_kind(table),
                     "table": table, "source": ""}]
        out.append({"role": role, "kind": kind or head, "table": sub, "source": head})
    return out


# -- text encoders -------------------------------------------------------------------------------

def _shape(table, key):
    t = table.get(key)
    return tuple(t[1]) if t else None


def count_blocks(table, pattern: str) -> int:
    rx = re.compile(pattern)
    seen = {m.group(1) for k in table for m in [rx.match(k)] if m}
    return len(seen)


def text_encoder_kind(t: dict) -> str | None:
    """clip-l, clip-g, clip-h, t5-xxl, umt5-xxl, t5-base, llama, qwen2.5-vl, qwen3, gemma, mistral, llm, ltx-2-connectors;
    None if not a text encoder."""
    for p in ("", "transformer.", "clip_l.transformer.", "clip_g.transformer."):
        emb = _shape(t, p + "text_model.embeddings.token_embedding.weight")
        if emb:
            return {768: "clip-l", 1280: "clip-g", 1024: "clip-h"}.get(emb[1], "clip")
    if _shape(t, "model.token_embedding.weight") or "transformer.resblocks.0.attn.in_proj_weight" in t or \
            "model.transformer.resblocks.0.attn.in_proj_weight" in t:
        width = (_shape(t, "token_embedding.weight") or _shape(t, "model.token_embedding.weight") or (0, 1024))[1]
        return {1280: "clip-g", 1024: "clip-h", 768: "clip-l"}.get(width, "clip")
    for p in ("", "transformer."):
        q = _shape(t, p + "encoder.block.0.layer.0.SelfAttention.q.weight")
        if q:
            emb = _shape(t, p + "shared.weight") or _shape(t, p + "encoder.embed_tokens.weight")
            umt5 = (p + "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight") in t or (emb and emb[0] > 200000)
            if q[1] >= 4096:
                return "umt5-xxl" if umt5 else "t5-xxl"
            return "umt5" if umt5 else "t5"
    if "enc.blk.0.attn_q.weight" in t:  # llama.cpp-style T5 GGUF
        return "t5-xxl"
    for p in ("", "model.", "transformer.", "transformer.model.", "model.language_model.", "language_model.model.",
              "transformer.model.language_model."):
        emb = _shape(t, p + "embed_tokens.weight")
        if emb and any(k.startswith(p + "layers.0.") for k in t):
            return _llm_kind(t, emb[0], p)
    emb = _shape(t, "token_embd.weight")
    if emb and any(k.startswith("blk.") for k in t):
        return _llm_kind(t, emb[0] if emb[0] > emb[-1] else emb[-1], "")
    if "text_embedding_projection.weight" in t and any(k.startswith("video_embeddings_connector.") for k in t):
        return "ltx-2-connectors"  # LTX-2's part of its text encoder (ComfyUI's LTXAVTEModel, text_encoders/lt.py:70-87)
    return None


# a text encoder that is an LLM, by its vocabulary (Qwen's: by a vision tower, then by q_norm); LLM_KINDS, what
# _llm_kind names, is built from these tables
_QWEN_VOCABS = (151936, 152064)
_QWEN_KINDS = {"visual": "qwen2.5-vl", "q_norm": "qwen3", "": "qwen2.5"}
_LLM_BY_VOCAB = {256000: "gemma", 262144: "gemma", 262208: "gemma", 128256: "llama", 128000: "llama", 131072: "mistral"}
_OTHER_LLM = "llm"
LLM_KINDS = (*_QWEN_KINDS.values(), *dict.fromkeys(_LLM_BY_VOCAB.values()), _OTHER_LLM)


def _llm_kind(t, vocab, p):
    visual = any(k.startswith(("visual.", "model.visual.")) for k in t)
    if visual or vocab in _QWEN_VOCABS:
        return _QWEN_KINDS["visual" if visual else "q_norm" if any(k.endswith("self_attn.q_norm.weight") for k in t) else ""]
    return _LLM_BY_VOCAB.get(vocab, _OTHER_LLM)


# -- VAEs ----------------------------------------------------------------------------------------

def _looks_like_vae(t):
    return any(k.startswith(("decoder.", "encoder.")) for k in t) and not any(k.startswith("encoder.block.") for k in t)


# The latent channels each VAE kind decodes: ComfyUI 0.8.0 comfy/sd.py VAE.__init__'s latent_channels per branch (KL:
# decoder.conv_in's z_channels, x 4 with FLUX.2's batch-norm latent, l.425; LTX-Video 128, l.477; HunyuanVideo's 3-D KL
# z_channels, l.512; Wan 2.2 48, l.539; Wan 2.1 16, l.552). VAE.decode checks none: a latent of another width reaches
# the decoder's first convolution (post_quant_conv, Wan's conv2), which raises "expected input[...] to have 16
# channels, but got 48 channels instead", after the whole sampling.
VAE_LATENT_CHANNELS = {H3D.VAE_KIND: 64, "kl-f8-4ch": 4, "kl-f8-16ch": 16, "kl-f16-32ch": 128, "wan21": 16, "wan22": 48,
                       "hunyuan-video": 16, "hunyuan-video-15": 32, "ltxv": 128}


def vae_latent_channels(kind) -> int | None:
    """The latent channels a VAE of this kind (vae_kind) decodes; None where the kind does not tell."""
    if kind in VAE_LATENT_CHANNELS:
        return VAE_LATENT_CHANNELS[kind]
    m = re.fullmatch(r"kl-(\d+)ch", str(kind or ""))
    return int(m.group(1)) if m else None


def vae_mismatch(comps, family=None) -> str | None:
    """Why the VAE cannot decode the diffusion model's latent (VAE_LATENT_CHANNELS against the family's channels), or
    None: a run ComfyUI fails after sampling, at VAE Decode. family: the model's family where the caller knows better
    than the components (the node's model_config); else the diffusion model's, as classified or detected."""
    from . import layouts, spec
    dm = next((c for c in comps if c["role"] == "diffusion_model"), None)
    fam = family or (dm.get("family") or detect_family(dm["table"])["family"] if dm else None)
    if not fam or fam == "unknown":
        return None
    want = spec.family(fam)["ch"]
    for c in comps:
        have = vae_latent_channels(c.get("kind") or vae_kind(c["table"])) if c["role"] == "vae" else None
        if have is not None and have != want:
            usual = next((v["vae"] for k, v in layouts.FAMILY_FILES.items() if layouts.family_of(k) == fam and v.get("vae")),
                         None)  # the family's standard VAE (its own FAMILY_FILES entry, or the variant entry naming it)
            return (f"{c.get('source') or 'VAE'}: a {have}-channel VAE cannot decode {spec.family(fam)['name']}'s {want}-channel "
                    f"latent: ComfyUI's VAE Decode raises a RuntimeError at the decoder's first convolution "
                    f"('expected input ... to have {have} channels, but got {want}'; comfy/sd.py VAE.decode), "
                    "after sampling" + (f"; give its VAE ({usual.removeprefix('vae_')})" if usual else ""))
    return None


def check_vae_channels(comps) -> None:
    """vae_mismatch as an error (exit 2): `estimate FILE...` and `estimate --workflow` (with the node's open-graph route)."""
    why = vae_mismatch(comps)
    if why:
        from ..errors import UserError
        raise UserError(why)


def vae_kind(t: dict) -> str | None:
    """kl-f8-4ch (SD/SDXL), kl-f8-16ch (Flux/SD3), kl-f16-32ch (Flux2), wan21, wan22, hunyuan-video, ltxv, mochi, video."""
    if H3D.VAE_KEY in t:
        return H3D.VAE_KIND
    ci = _shape(t, "decoder.conv_in.weight")
    if ci and len(ci) == 4:
        z = ci[1]
        return {4: "kl-f8-4ch", 16: "kl-f8-16ch", 32: "kl-f16-32ch"}.get(z, f"kl-{z}ch")
    if "conv2.weight" in t and any(k.startswith("decoder.upsamples.") for k in t):
        z = (_shape(t, "conv2.weight") or (16,))[0]
        return "wan22" if z == 48 else "wan21"
    if "per_channel_statistics.mean-of-means" in t or any("per_channel_statistics" in k for k in t):
        return "ltxv"
    ci = _shape(t, "decoder.conv_in.conv.weight")
    if ci and len(ci) == 5:
        return {16: "hunyuan-video", 32: "hunyuan-video-15", 128: "ltxv"}.get(ci[1], "video")
    if any(k.startswith("decoder.blocks.") for k in t) and any("conv3d" in k or "causal" in k for k in t):
        return "video"
    if any(k.startswith("decoder.") for k in t):
        return "video" if any(len(v[1]) == 5 for v in t.values()) else "vae"
    return None


# -- diffusion models ----------------------------------------------------------------------------

# Wan 2.2 A14B (T2V/I2V): Wan 2.1's 14B latent, VAE and block layout, but Wan-Video/Wan2.2 runs it through its own
# WanModel (wan/modules/model.py, 42bf4cf: forward l.460 `if t.dim() == 1: t = t.expand(t.size(0), seq_len)`, then
# e and e0 per token in fp32, l.462-467; text2video.py / image2video.py pass one timestep a sample, torch.stack([t])),
# so its modulation is per token, as TI2V-5B's (arch timestep "token", phases.wan_reference_peak). Wan-Video/Wan2.1's
# WanModel.forward (9737cba) embeds the [B] timestep as is: per sample. A T2V A14B file has Wan 2.1 T2V 14B's exact
# layout, so only its name tells it (ComfyUI's wan2.2_t2v_high_noise_14B_*, Kijai's Wan2_2-T2V-A14B-*); the I2V A14B
# has the 36-channel patch embedding without img_emb (no CLIP image encoder), which no Wan 2.1 14B file has.
WAN22_NAME = re.compile(r"wan[-_ .]?2[-_.]?2|a14b|high[-_]?noise|low[-_]?noise", re.I)


def _mark_wan22_a14b(c: dict) -> dict:
    c["variant"] = (c.get("variant") or "").split(" ")[0] + " A14B (Wan 2.2)"
    c["arch"] = dict(c["arch"], timestep="token")
    c.pop("note", None)
    return c


def detect_family(t: dict) -> dict:
    """{family, variant, arch: {hidden, depth, heads, ffn, ...}} from a diffusion model's keys and shapes."""
    s = lambda k: _shape(t, k)  # noqa: E731
    has = t.__contains__
    h3d = H3D.detect(t)  # before FLUX.1's: Hunyuan3D 2.0's double blocks have its img_attn.norm.key_norm
    if h3d:
        return h3d
    if has("txt_in.individual_token_refiner.blocks.0.norm1.weight"):
        w = s("img_in.proj.weight") or (3072, 16, 1, 2, 2)
        d = w[0]
        arch = {"hidden": d, "depth": count_blocks(t, r"double_blocks\.(\d+)\.") + count_blocks(t, r"single_blocks\.(\d+)\."),
                "heads": d // 128, "ffn": 4 * d, "block": "flux", "in_channels": w[1]}
        if len(w) == 4:
            return {"family": "hunyuan-image", "variant": "2.1", "arch": arch}
        if w[1] >= 64 or d == 2048:  # 1.5: 65 in (32 noise + 32 image + mask; SR distilled 98), 2048 wide
            # 1.5 has double blocks only: its block is the family's (spec.DEFAULT_ARCH, "dual", hv17), chosen by family,
            # not by counting single_blocks keys: a synthetic 13B table (estimate_synth_layouts.py) names none
            return {"family": "hunyuan-video-15", "variant": "",
                    "arch": dict(arch, block=DEFAULT_ARCH["hunyuan-video-15"]["block"])}
        return {"family": "hunyuan-video", "variant": "i2v" if w[1] > 16 else "t2v", "arch": arch}
    if has("double_blocks.0.img_attn.norm.key_norm.scale"):
        img_in = s("img_in.weight")
        d = img_in[0] if img_in else (s("double_blocks.0.img_attn.proj.weight") or (3072,))[0]
        n_double = count_blocks(t, r"double_blocks\.(\d+)\.")
        n_single = count_blocks(t, r"single_blocks\.(\d+)\.")
        mlp = s("double_blocks.0.img_mlp.0.weight")
        arch = {"hidden": d, "depth": n_double + n_single, "double": n_double, "single": n_single, "heads": d // 128,
                "ffn": mlp[0] if mlp else 4 * d, "block": "flux"}
        if has("double_stream_modulation_img.lin.weight"):
            arch["ffn"], arch["gated_mlp"] = int(3 * d), True
            variant = "dev (32B)" if d >= 6144 else f"klein ({_params_b(t)})"
            return {"family": "flux2", "variant": variant, "arch": arch}
        if any(k.startswith("distilled_guidance_layer.") for k in t):
            return {"family": "chroma", "variant": "radiance" if has("nerf_blocks.0.norm.scale") else "", "arch": arch}
        variant = "dev" if has("guidance_in.in_layer.weight") else "schnell"
        if img_in and img_in[1] > 64:
            variant += " (fill/inpaint)" if img_in[1] == 384 else f" ({img_in[1]} in)"
        return {"family": "flux1", "variant": variant, "arch": arch}
    if has("single_transformer_blocks.0.attn.to_q.weight") and has("x_embedder.weight"):  # diffusers Flux
        d = s("x_embedder.weight")[0]
        arch = {"hidden": d, "depth": count_blocks(t, r"(?:single_)?transformer_blocks\.(\d+)\.") , "heads": d // 128,
                "ffn": 4 * d, "block": "flux"}
        fam = "flux2" if any(k.startswith("double_stream_modulation_img") for k in t) else "flux1"
        return {"family": fam, "variant": "diffusers", "arch": arch}
    if has("joint_blocks.0.context_block.attn.qkv.weight"):
        d = (s("x_embedder.proj.weight") or (1536,))[0]
        depth = count_blocks(t, r"joint_blocks\.(\d+)\.")
        variant = "3.5 large" if d >= 2432 else ("3.5 medium" if has("joint_blocks.0.x_block.attn2.qkv.weight") else "medium")
        return {"family": "sd3", "variant": variant, "arch": {"hidden": d, "depth": depth, "heads": d // 64, "ffn": 4 * d, "block": "mmdit",
                                                             "dual_attention": has("joint_blocks.0.x_block.attn2.qkv.weight")}}
    if has("transformer_blocks.0.attn.add_q_proj.weight") and has("pos_embed.proj.weight"):  # diffusers SD3
        d = s("pos_embed.proj.weight")[0]
        return {"family": "sd3", "variant": "diffusers", "arch": {"hidden": d, "depth": count_blocks(t, r"transformer_blocks\.(\d+)\."),
                                                                 "heads": d // 64, "ffn": 4 * d, "block": "mmdit"}}
    if has("t5_yproj.weight"):  # SwiGLU MLP: w1 is fused (2 x its width); Mochi 1 preview's width is 8192
        w1 = s("blocks.0.mlp_x.w1.weight")
        return {"family": "mochi", "variant": "preview 10B", "arch": {"hidden": 3072, "depth": count_blocks(t, r"blocks\.(\d+)\.") or 48,
                                                                     "heads": 24, "ffn": w1[0] // 2 if w1 else 8192, "block": "mmdit",
                                                                     "gated_mlp": True}}
    if has("adaln_single.emb.timestep_embedder.linear_1.bias") and not has("pos_embed.proj.bias"):
        k = s("transformer_blocks.0.attn2.to_k.weight") or (2048, 4096)
        d = k[0]
        depth = count_blocks(t, r"transformer_blocks\.(\d+)\.")
        if has("audio_adaln_single.linear.weight"):  # LTX-2: model_detection.py:308 "ltxav", supported_models.LTXAV
            return {"family": "ltx-2", "variant": _params_b(t), "arch": _ltx2_arch(t, s, d, depth, k[1])}
        return {"family": "ltxv", "variant": f"{_params_b(t)}", "arch": {"hidden": d, "depth": depth, "heads": d // 64, "ffn": 4 * d,
                                                                  "block": "cross", "cross_attention_dim": k[1]}}
    if has("blocks.block0.blocks.0.block.attn.to_q.0.weight"):
        d = s("blocks.block0.blocks.0.block.attn.to_q.0.weight")[0]
        return {"family": "cosmos", "variant": f"1 ({_params_b(t)})", "arch": {"hidden": d, "depth": count_blocks(t, r"blocks\.block(\d+)\."),
                                                                               "heads": d // 128, "ffn": 4 * d, "block": "cross"}}
    if has("blocks.0.mlp.layer1.weight") and has("x_embedder.proj.1.weight"):
        d = s("x_embedder.proj.1.weight")[0]
        return {"family": "cosmos", "variant": f"predict2 ({_params_b(t)})",
                "arch": {"hidden": d, "depth": count_blocks(t, r"blocks\.(\d+)\."), "heads": d // 128, "ffn": 4 * d,
                         "block": "cross", "model_channels": d}}
    if has("cap_embedder.1.weight"):
        d = s("cap_embedder.1.weight")[0]
        depth = count_blocks(t, r"layers\.(\d+)\.")
        w1 = s("layers.0.feed_forward.w1.weight")
        arch = {"hidden": d, "depth": depth, "heads": 30 if d == 3840 else 24, "ffn": w1[0] if w1 else int(d * 8 / 3),
                "block": "nextdit"}
        if d == 3840:
            return {"family": "z-image", "variant": "6B", "arch": arch}
        return {"family": "lumina2", "variant": "2B", "arch": arch}
    if has("head.modulation"):
        d = s("head.modulation")[-1]
        ffn = (s("blocks.0.ffn.0.weight") or (4 * d,))[0]
        in_dim = (s("patch_embedding.weight") or (0, 16))[1]
        out_dim = (s("head.head.weight") or (64,))[0] // 4
        arch = {"hidden": d, "depth": count_blocks(t, r"blocks\.(\d+)\."), "heads": d // 128, "ffn": ffn, "block": "cross",
                "in_dim": in_dim, "out_dim": out_dim}
        size = {1536: "1.3B", 3072: "5B", 5120: "14B"}.get(d, _params_b(t))
        kind = "i2v" if has("img_emb.proj.0.bias") or in_dim == 36 else "t2v"
        if has("vace_patch_embedding.weight"):
            kind = "vace"
        if out_dim == 48:
            return {"family": "wan22", "variant": f"ti2v {size}", "arch": dict(arch, timestep="token")}
        if d == 5120 and in_dim == 36 and not has("img_emb.proj.0.bias"):  # Wan 2.1's 14B I2V/FLF2V carry img_emb
            return _mark_wan22_a14b({"family": "wan21", "variant": "i2v", "arch": arch})
        return {"family": "wan21", "variant": f"{kind} {size}", "arch": arch,
                **({"note": "Wan 2.2 T2V A14B high/low-noise files have this exact layout: a file name with wan2.2 / A14B / "
                            "high_noise / low_noise tells them apart (their reference runner embeds a timestep per token)"}
                   if d == 5120 else {})}
    if has("condition_embedder.time_embedder.linear_1.weight") and has("blocks.0.attn1.to_q.weight"):  # diffusers Wan
        d = s("blocks.0.attn1.to_q.weight")[0]
        ffn = (s("blocks.0.ffn.net.0.proj.weight") or (4 * d,))[0]
        out = (s("proj_out.weight") or (64,))[0] // 4
        arch = {"hidden": d, "depth": count_blocks(t, r"blocks\.(\d+)\."), "heads": d // 128, "ffn": ffn, "block": "cross"}
        size = {1536: "1.3B", 3072: "5B", 5120: "14B"}.get(d, _params_b(t))
        return {"family": "wan22" if out == 48 else "wan21", "variant": f"diffusers {size}", "arch": arch}
    if has("caption_projection.0.linear.weight"):
        return {"family": "hidream", "variant": "i1 (17B)", "arch": {"hidden": 2560, "depth": 48, "heads": 20, "ffn": 6912,
                                                                    "block": "gated", "experts_active": 3}}
    if has("txt_norm.weight"):
        d = (s("img_in.weight") or (3072,))[0]
        return {"family": "qwen-image", "variant": "20B" if d == 3072 else _params_b(t),
                "arch": {"hidden": d, "depth": count_blocks(t, r"transformer_blocks\.(\d+)\."), "heads": d // 128, "ffn": 4 * d,
                         "block": "dual"}}
    if has("t_block.1.weight"):
        d = (s("x_embedder.proj.weight") or (1152,))[0]
        return {"family": "pixart", "variant": "", "arch": {"hidden": d, "depth": count_blocks(t, r"blocks\.(\d+)\."), "heads": 16,
                                                           "ffn": 4 * d, "block": "cross"}}
    if has("double_layers.0.attn.w1q.weight"):
        return {"family": "auraflow", "variant": "", "arch": {"hidden": 3072, "depth": 36, "heads": 24, "ffn": 8192, "block": "double"}}
    if has("mlp_t5.0.weight"):
        return {"family": "hunyuan-dit", "variant": "", "arch": {"hidden": 1408, "depth": 40, "heads": 16, "ffn": 6144, "block": "cross"}}
    unet = _detect_unet(t)
    if unet:
        return unet
    return {"family": "unknown", "variant": "", "arch": {"hidden": _generic_width(t), "depth": 0, "heads": 0, "ffn": 0,
                                                         "block": "unknown"}}


def _ltx2_arch(t, s, d, depth, ctx) -> dict:
    """LTX-2's two streams (ComfyUI 0.8.0 lightricks/av_model.py BasicAVTransformerBlock): the video stream d wide
    (attn2.to_k rows), its FeedForward ff.net.0.proj's rows; the audio stream audio_attn1.to_q's rows, audio_ff's."""
    da = (s("transformer_blocks.0.audio_attn1.to_q.weight") or (2048,))[0]
    fv = (s("transformer_blocks.0.ff.net.0.proj.weight") or (4 * d,))[0]
    fa = (s("transformer_blocks.0.audio_ff.net.0.proj.weight") or (4 * da,))[0]
    qn = s("transformer_blocks.0.attn1.q_norm.weight")
    return {"hidden": d, "depth": depth, "heads": 32, "ffn": fv, "block": "av", "cross_attention_dim": ctx,
            "audio_hidden": da, "audio_ffn": fa, "audio_heads": 32, "qk_norm": bool(qn)}


def _generic_width(t) -> int:
    """An unrecognised model's width for the generic DiT figure (phases.units: 20 x hidden per token): the commonest
    side of its square matrices (a transformer's attention projections are hidden x hidden), else the commonest input
    width of its matrices; 0 without a matrix. Was 0 always: the generic sample phase came out near zero (10 MiB for a
    3072-wide, 40-block model at 1024x1024, beside ComfyUI's own 1.28 GiB)."""
    mats = [tuple(v[1]) for v in t.values() if len(v[1]) == 2]
    square = Counter(a for a, b in mats if a == b and a > 1)
    return (square or Counter(b for _, b in mats)).most_common(1)[0][0] if mats else 0


def _detect_unet(t) -> dict | None:
    s = lambda k: _shape(t, k)  # noqa: E731
    if "input_blocks.0.0.weight" in t:
        mc = s("input_blocks.0.0.weight")[0]
        ctx = None
        for k, v in t.items():
            if k.endswith("attn2.to_k.weight"):
                ctx = v[1][1]
                break
        arch = {"hidden": mc, "model_channels": mc, "block": "unet", "context_dim": ctx, "depth": 0, "heads": 8, "ffn": 4 * mc,
                "attention_at_full": "input_blocks.1.1.proj_in.weight" in t}
    elif "down_blocks.0.resnets.0.conv1.weight" in t:  # diffusers UNet
        mc = s("conv_in.weight")[0] if "conv_in.weight" in t else 320
        ctx = next((v[1][1] for k, v in t.items() if k.endswith("attn2.to_k.weight")), None)
        arch = {"hidden": mc, "model_channels": mc, "block": "unet", "context_dim": ctx, "depth": 0, "heads": 8, "ffn": 4 * mc,
                "attention_at_full": "down_blocks.0.attentions.0.proj_in.weight" in t}
    else:
        return None
    if ctx == 2048 or ("label_emb.0.0.weight" in t and ctx != 1280) or "add_embedding.linear_1.weight" in t and ctx == 2048:
        return {"family": "sdxl", "variant": "base" if mc == 320 else f"{mc}ch", "arch": arch}
    if ctx == 1280:
        return {"family": "sdxl", "variant": "refiner", "arch": arch}
    if ctx == 1024:
        return {"family": "sd2", "variant": "", "arch": arch}
    if ctx == 768 or ctx is None:
        return {"family": "sd1", "variant": "", "arch": arch}
    return {"family": "unknown", "variant": f"unet ctx {ctx}", "arch": arch}


def _params_b(t) -> str:
    from math import prod
    n = sum(prod(s) for _, s in t.values())
    return f"{n / 1e9:.1f}B"
