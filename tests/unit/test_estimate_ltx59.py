"""ltx59: LTX-2 as users load it. The published single-file checkpoint (ltx-2-19b-*.safetensors) holds the diffusion
model, the video VAE (vae.*), the text side's projection and connectors, the audio VAE (audio_vae.*) and its vocoder
(vocoder.*); ComfyUI 0.8.0 hands each part to another model and loader (families.LTX2_TEXT_KEYS, comments there).

The checkpoint fixture is assembled from key names and shapes ComfyUI's own classes give on the meta device: the bundled
layouts ltx-2_ltx-2-19b_bf16 (LTXAVModel), te_ltx-2_text_connectors (LTXAVTEModel's projection and connectors, renamed
back to the checkpoint's names as LTXAVTEModel.load_sd reads them, text_encoders/lt.py:115), vae_ltxv_v0.9, and
data/ltx2_audio_vae_vocoder_keys.json (CausalAudioAutoencoder() and Vocoder() at their default configs, ComfyUI 0.8.0,
state_dict() under the prefixes AudioVAE strips, audio_vae.py:150-151; 102 + 194 tensors). Expected bytes are hand
arithmetic from the parameter counts in memory/estimate/layouts/README.md, BF16 (2 bytes).
Deliberate errors checked to fail: the old split_components (no LTX-2 parts: an "unknown" second diffusion model of
1,662,751,208 bytes, the connectors inside the diffusion model's 39,170,230,784; a diffusion model file without the
prefix taken whole as the connectors' text encoder, 40,615,299,584)."""
import json
from pathlib import Path

from gpu_garden.memory.estimate import families, layouts

AUDIO_KEYS = Path(__file__).parent / "data" / "ltx2_audio_vae_vocoder_keys.json"
CKPT = "ltx-2-19b-dev.safetensors"

# parameters (layouts/README.md; the audio pair as its fixture gives them), BF16
DM_BYTES = 2 * 18_876_174_592             # LTXAVModel: 37,752,349,184
TEXT_BYTES = 2 * (3840 * 3840 * 49 + 2 * 354_470_400)   # projection 3840 x 49 -> 3840, two connectors: 2,862,950,400
AUDIO_BYTES = 2 * (53_248_402 + 55_592_802)             # CausalAudioAutoencoder + Vocoder: 217,682,408
VAE_BYTES = 2 * 419_194_289              # vae_ltxv_v0.9 standing in for the video VAE: 838,388,578


def checkpoint() -> dict:
    """{name: {dtype, shape}} of the single-file checkpoint, under the names ComfyUI 0.8.0 reads it by."""
    out = {}
    for k, v in layouts.load("ltx-2_ltx-2-19b_bf16")["tensors"].items():
        out["model.diffusion_model." + k] = v
    for k, v in layouts.load("te_ltx-2_text_connectors")["tensors"].items():
        out["text_embedding_projection.aggregate_embed.weight" if k == "text_embedding_projection.weight"
            else "model.diffusion_model." + k] = v
    for k, v in layouts.load("vae_ltxv_v0.9")["tensors"].items():
        out["vae." + k] = v
    for k, (dtype, shape) in json.loads(AUDIO_KEYS.read_text()).items():
        out[k] = {"dtype": dtype, "shape": shape}
    return out


def _table(layout):
    return {k: (v["dtype"], tuple(v["shape"])) for k, v in layout.items()}


def test_the_checkpoint_splits_as_comfyui_loads_it():
    comps = families.split_components(_table(checkpoint()), CKPT)
    got = [(c["role"], c["kind"], c["bytes"]) for c in comps]
    assert got == [("diffusion_model", None, DM_BYTES), ("text_encoder", "ltx-2-connectors", TEXT_BYTES),
                   ("vae", "ltxv", VAE_BYTES), ("other", families.LTX2_AUDIO_KIND, AUDIO_BYTES)]
    assert comps[0]["family"] == "ltx-2" and comps[0]["variant"] == "18.9B"
    # the text part under LTXAVTEModel's own names (lt.py:115), as the connectors layout holds them
    assert set(comps[1]["table"]) == set(layouts.table("te_ltx-2_text_connectors"))
    assert len(comps[3]["table"]) == 102 + 194


def test_a_diffusion_model_file_without_the_prefix_gives_up_its_connectors():
    t = layouts.table("ltx-2_ltx-2-19b_bf16") | layouts.table("te_ltx-2_text_connectors")  # names as lt.py:116-117 reads them
    comps = families.split_components(t, "ltx-2 transformer")
    assert [(c["role"], c["bytes"]) for c in comps] == [("diffusion_model", DM_BYTES), ("text_encoder", TEXT_BYTES)]


def test_files_without_ltx2_parts_are_split_as_before():
    # the connectors alone stay one text encoder (rev58), and vocoder.* without audio_vae.* is another VAE's (Ace-Step's
    # VAE file holds vocoder.*, sd.py:585): not LTX-2's audio part
    te = families.split_components(layouts.table("te_ltx-2_text_connectors"), "connectors")
    assert [(c["role"], c["kind"], c["bytes"]) for c in te] == [("text_encoder", "ltx-2-connectors", TEXT_BYTES)]
    ace = {"decoder.conv_in.weight": ("F32", (512, 8, 3, 3)), "vocoder.backbone.channel_layers.0.0.bias": ("F32", (128,))}
    assert [c["role"] for c in families.split_components(ace, "ace vae")] == ["vae"]
