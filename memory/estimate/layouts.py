"""Bundled header-only layouts of real model files, and writing them out as sparse safetensors."""
import gzip
import json
import os
from pathlib import Path

LAYOUT_DIR = Path(__file__).with_name("layouts")

DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
               "U16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1}


# The standard files of a family as bundled layouts, the one table: `gpu-garden estimate NAME` sizes a run from it
# before anything is downloaded, and `trace --family` builds ComfyUI's class from it (memory/trace/comfy_checkout.py).
# model: the diffusion model (a checkpoint's layout holds its text encoders and VAE too); vae; te: the text encoders
# the usual workflow loads that have a bundled layout; te_missing: the usual text encoder that has none; hub: the
# Hugging Face repos whose model is that layout (`estimate black-forest-labs/FLUX.1-dev`, or its last part).
FAMILY_FILES = {
    "sd1": {"model": "sd15_v1-5-pruned-emaonly-fp16", "vae": "vae_sd15_vae-ft-mse-840000-ema-pruned", "te": ("te_clip_l",),
            "hub": ("stable-diffusion-v1-5/stable-diffusion-v1-5", "runwayml/stable-diffusion-v1-5")},
    "sdxl": {"model": "sdxl_sd_xl_base_1.0", "vae": "vae_sdxl_vae", "te": ("te_clip_l", "te_clip_g"),
             "hub": ("stabilityai/stable-diffusion-xl-base-1.0",)},
    "sd3": {"model": "sd3_sd3.5_medium", "vae": "vae_flux_ae", "te": ("te_clip_l", "te_clip_g", "te_t5xxl_fp16"),
            "hub": ("stabilityai/stable-diffusion-3.5-medium",)},
    "flux1": {"model": "flux_flux1-dev", "vae": "vae_flux_ae", "te": ("te_clip_l", "te_t5xxl_fp16"),
              "hub": ("black-forest-labs/FLUX.1-dev",)},
    "wan21": {"model": "wan_wan2.1_t2v_1.3B_fp16", "vae": "vae_wan_2.1_vae", "te": ("te_umt5_xxl_fp16",),
              "hub": ("Wan-AI/Wan2.1-T2V-1.3B",)},
    "wan22": {"model": "wan_wan2.2_ti2v_5B_fp16", "vae": "vae_wan2.2_vae", "te": ("te_umt5_xxl_fp16",),
              "hub": ("Wan-AI/Wan2.2-TI2V-5B",)},
    "qwen-image": {"model": "qwen_image_qwen_image_bf16", "vae": "vae_wan_2.1_vae", "te": (),
                   "te_missing": "Qwen2.5-VL 7B", "hub": ("Qwen/Qwen-Image",)},
    "z-image": {"model": "z_image_z_image_turbo_bf16", "vae": "vae_flux_ae", "te": (), "te_missing": "Qwen3 4B",
                "hub": ("Tongyi-MAI/Z-Image-Turbo",)},
    "hunyuan-video": {"model": "hunyuan_video_hunyuan_video_t2v_720p_bf16", "vae": "vae_hunyuan_video_vae_bf16",
                      "te": ("te_clip_l",), "te_missing": "LLaVA-Llama 3 8B", "hub": ("tencent/HunyuanVideo",)},
    "ltxv": {"model": "ltxv_ltx_video_2b_v0.9_bf16", "vae": "vae_ltxv_v0.9", "te": ("te_t5xxl_fp16",), "hub": ()},
    # ltx58: LTX-2's transformer as ComfyUI 0.8.0's LTXAVModel builds it (no published file checked, layouts/README.md);
    # its video VAE as ComfyUI's VideoVAE builds it from the checkpoint's config metadata (ltx63: comfy_recipes.LTX_2_VAE;
    # LTX-Video 0.9's layout stood in before, 0.84 of its 2.44 GB)
    # its text encoder as ComfyUI 0.8.0's LTXAVTEModel holds it: Gemma 3 12B (Gemma3_12B) and the projection and two
    # connectors it loads from the LTX-2 checkpoint (text_encoders/lt.py:70-87, te_ltx-2_text_connectors; rev58)
    "ltx-2": {"model": "ltx-2_ltx-2-19b_bf16", "vae": "vae_ltx-2_video_vae", "te": ("te_gemma_3_12b_it", "te_ltx-2_text_connectors"),
              "hub": ()},
    "flux2": {"model": "flux2_flux2_dev_bf16", "vae": "vae_flux2_vae", "te": (), "te_missing": "Mistral Small 3.1 24B",
              "hub": ("black-forest-labs/FLUX.2-dev",)},
    # lay53 (layouts/README.md). Chroma: T5-XXL (supported_models.Chroma's pixart_t5) and the FLUX.1 ae (latent_formats.Flux)
    "chroma": {"model": "chroma_chroma-unlocked-v2", "vae": "vae_flux_ae", "te": ("te_t5xxl_fp16",), "hub": ()},
    # the files Comfy-Org/HiDream-I1_ComfyUI lists beside the model: ae, T5-XXL, Llama 3.1 8B and its own two CLIPs
    "hidream": {"model": "hidream_hidream_i1_full_fp16", "vae": "vae_flux_ae", "te": ("te_t5xxl_fp16",),
                "te_missing": "Llama 3.1 8B Instruct, clip_l_hidream and clip_g_hidream", "hub": ()},
    # an entry that is not a family id names its family; its text encoders as Comfy-Org/HunyuanVideo_1.5_repackaged lists
    "hunyuan-video-1.5": {"family": "hunyuan-video-15", "model": "hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16",
                          "vae": "vae_hunyuan_video_1.5_vae", "te": (), "te_missing": "Qwen2.5-VL 7B and byT5 small (glyph)",
                          "hub": ()},
    # h3d63: Hunyuan3D 2.x checkpoints (ImageOnlyCheckpointLoader): the DiT, its DINOv2 and its ShapeVAE in one file
    # (the layout is its own VAE's entry: report.py adds a VAE only where the files hold none); 2.0 the family's standard
    "hunyuan3d": {"model": "hunyuan3d_hunyuan3d-dit-v2_fp16", "vae": "hunyuan3d_hunyuan3d-dit-v2_fp16", "te": (), "hub": ()},
    "hunyuan3d-2.1": {"family": "hunyuan3d", "model": "hunyuan3d_hunyuan_3d_v2.1", "vae": "hunyuan3d_hunyuan_3d_v2.1",
                      "te": (), "hub": ()},
}
ALIASES = {"sd15": "sd1", "sd1.5": "sd1", "flux": "flux1", "flux-dev": "flux1", "wan": "wan21", "wan2.1": "wan21",
           "wan2.2": "wan22", "sd35": "sd3", "sd3.5": "sd3", "qwen_image": "qwen-image", "qwen": "qwen-image",
           "z_image": "z-image", "zimage": "z-image", "hunyuan_video": "hunyuan-video", "hunyuanvideo": "hunyuan-video",
           "ltx": "ltxv", "ltx-video": "ltxv", "ltx2": "ltx-2", "ltxav": "ltx-2", "flux.2": "flux2", "hunyuanvideo1.5": "hunyuan-video-1.5",
           "hidream-i1": "hidream", "hunyuan3d-2": "hunyuan3d", "hunyuan3d-2.0": "hunyuan3d", "hidream_i1_dev_bf16": "hidream", "hidream_i1_fast_bf16": "hidream"}


def family_of(entry: str) -> str:
    """The family id (families.FAMILIES) of a FAMILY_FILES entry: its key, or the family a variant's entry names."""
    return FAMILY_FILES[entry].get("family", entry)


def _norm(name: str) -> str:
    """Case, '_' / ' ' / '-' and dots do not tell names apart: FLUX.1-dev (the Hub's spelling, and the family name the
    report prints) is flux1-dev, Wan2.1-T2V-1.3B is wan21-t2v-13b, as the layouts and the aliases are read too."""
    n = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    return n.removesuffix(".safetensors").removesuffix(".sft").replace(".", "")


def resolve(name: str):
    """A name for bundled layouts: a family id or alias (its FAMILY_FILES entry: ("family", id)), or one layout by its
    name or the file part of it, with or without the dtype suffix ("flux1-dev", "wan2.2-ti2v-5b", "t5xxl", "ae":
    ("layout", name)); None for no match. Two layouts that match equally are refused by name."""
    n = _norm(name)
    fams = {_norm(f): f for f in FAMILY_FILES} | {_norm(a): f for a, f in ALIASES.items()} | _hub_names()
    if n in fams:
        return "family", fams[n]
    hits = []
    for lay in names():
        full = _norm(lay)
        bare = full.removesuffix("-fp16").removesuffix("-bf16")
        if n in (full, bare) or full.endswith("-" + n) or bare.endswith("-" + n):
            hits.append(lay)
    if len(hits) > 1:
        from ..errors import UserError
        raise UserError(f"{name}: matches several bundled layouts ({', '.join(hits)}): give one of those names")
    return ("layout", hits[0]) if hits else None


def _hub_names() -> dict:
    """{normalized Hub repo id or its last part: family}, from FAMILY_FILES' hub entries."""
    return {_norm(n): f for f, v in FAMILY_FILES.items() for h in v.get("hub", ()) for n in (h, h.split("/")[-1])}


def hub_repo(name: str):
    """The Hub repo id FAMILY_FILES lists that `name` spells (whole or its last part), else None."""
    n = _norm(name)
    return next((h for v in FAMILY_FILES.values() for h in v.get("hub", ()) if n in (_norm(h), _norm(h.split("/")[-1]))), None)


LIST_COMMAND = "gpu-garden estimate --layouts"


def closest(name: str, n: int = 3) -> list[str]:
    """The n names `estimate` takes for bundled layouts closest to `name` (difflib, a model extension left out)."""
    import difflib
    from .host_ram import MODEL_FILE_EXT
    stem = str(name).rsplit("/", 1)[-1]
    base, ext = os.path.splitext(stem)
    stem = base if ext.lower() in MODEL_FILE_EXT else stem
    cands = sorted(FAMILY_FILES) + sorted(ALIASES) + names() + [h for v in FAMILY_FILES.values() for h in v.get("hub", ())]
    low = {c.lower(): c for c in cands}
    return [low[c] for c in difflib.get_close_matches(stem.lower(), list(low), n=n, cutoff=0.0)]


def listing() -> str:
    """Every name `estimate` takes for bundled layouts, one a line: what LIST_COMMAND prints."""
    inv = {}
    for a, f in ALIASES.items():
        inv.setdefault(f, []).append(a)
    lines = ["families (the model, its usual text encoders and VAE):"]
    width = max(map(len, FAMILY_FILES))  # one column for every name (hunyuan-video-1.5 is 17 long)
    for f, v in sorted(FAMILY_FILES.items()):
        also = inv.get(f, []) + list(v.get("hub", ()))
        lines.append(f"  {f:<{width}} {v['model']}" + (f"  (also: {', '.join(also)})" if also else ""))
    lines.append("layouts (one file each; a trailing part of the name also works, with or without -fp16/-bf16: t5xxl, ae, flux1-dev):")
    lines += [f"  {n}" for n in names()]
    return "\n".join(lines)


def names() -> list[str]:
    return sorted(p.name[:-len(".json.gz")] for p in LAYOUT_DIR.glob("*.json.gz"))


def load(name: str) -> dict:
    with gzip.open(LAYOUT_DIR / f"{name}.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


def table(name: str) -> dict:
    """A layout as the tensor table the estimate reads from a file's header: {key: (dtype, shape)}."""
    return {k: (v["dtype"], tuple(v["shape"])) for k, v in load(name)["tensors"].items()}


def tensor_nbytes(dtype: str, shape) -> int:
    n = DTYPE_BYTES[dtype]
    for d in shape:
        n *= d
    return n


def safetensors_header(layout: dict) -> dict:
    """The header a real file with these tensors has: data_offsets in key order, packed."""
    header, offset = {}, 0
    if layout.get("__metadata__"):
        header["__metadata__"] = layout["__metadata__"]
    for name, t in layout["tensors"].items():
        size = tensor_nbytes(t["dtype"], t["shape"])
        header[name] = {"dtype": t["dtype"], "shape": list(t["shape"]), "data_offsets": [offset, offset + size]}
        offset += size
    return header


def write_sparse(layout: dict | str, path: str | os.PathLike) -> Path:
    """Write a safetensors file with this layout; the data is zeros and left as a hole (sparse)."""
    if isinstance(layout, str):
        layout = load(layout)
    header = safetensors_header(layout)
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    data_len = max((v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"), default=0)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(len(blob).to_bytes(8, "little"))
        f.write(blob)
        f.truncate(8 + len(blob) + data_len)
    return path
