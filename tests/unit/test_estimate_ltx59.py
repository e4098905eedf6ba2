"""ltx59: LTX-2 as users load it. The published single-file checkpoint (ltx-2-19b-*.safetensors) holds the diffusion
model, the video VAE (vae.*), the text side's projection and connectors, the audio VAE (audio_vae.*) and its vocoder
(vocoder.*); ComfyUI 0.8.0 hands each part to another model and loader (families.LTX2_TEXT_KEYS, comments there). The
workflow estimate reads LTX-2's own loaders (LTXAVTextEncoderLoader, LTXVAudioVAELoader) and counts a file several
loaders name once, with their parts (workflow.LOADER_ROLES, workflow.components).

The checkpoint fixture is assembled from key names and shapes ComfyUI's own classes give on the meta device: the bundled
layouts ltx-2_ltx-2-19b_bf16 (LTXAVModel), te_ltx-2_text_connectors (LTXAVTEModel's projection and connectors, renamed
back to the checkpoint's names as LTXAVTEModel.load_sd reads them, text_encoders/lt.py:115), vae_ltx-2_video_vae
(ltx63: LTX-2's own video VAE), and
data/ltx2_audio_vae_vocoder_keys.json (CausalAudioAutoencoder() and Vocoder() at their default configs, ComfyUI 0.8.0,
state_dict() under the prefixes AudioVAE strips, audio_vae.py:150-151; 102 + 194 tensors). Expected bytes are hand
arithmetic from the parameter counts in memory/estimate/layouts/README.md, BF16 (2 bytes).
Deliberate errors checked to fail: the old split_components (no LTX-2 parts: an "unknown" second diffusion model of
1,662,751,208 bytes, the connectors inside the diffusion model's 39,170,230,784; a diffusion model file without the
prefix taken whole as the connectors' text encoder, 40,615,299,584); LOADERS without the two LTX-2 loaders (their
files not found: the Gemma file missing); components() splitting each loader's file anew (the checkpoint counted three
times: three diffusion models); LOADER_ROLES ignored (the UNETLoader workflow gets the checkpoint's diffusion model and
VAE a second time)."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.estimate import families, layouts, phases, spec, workflow
from gpu_garden.memory.units import MiB

AUDIO_KEYS = Path(__file__).parent / "data" / "ltx2_audio_vae_vocoder_keys.json"
CKPT = "ltx-2-19b-dev.safetensors"
GEMMA = "gemma_3_12B_it.safetensors"

# parameters (layouts/README.md; the audio pair as its fixture gives them), BF16
DM_BYTES = 2 * 18_876_174_592             # LTXAVModel: 37,752,349,184
TEXT_BYTES = 2 * (3840 * 3840 * 49 + 2 * 354_470_400)   # projection 3840 x 49 -> 3840, two connectors: 2,862,950,400
AUDIO_BYTES = 2 * (53_248_402 + 55_592_802)             # CausalAudioAutoencoder + Vocoder: 217,682,408
VAE_BYTES = 2 * (1_222_479_601 + 640)     # vae_ltx-2_video_vae (ltx63; test_estimate_ltx63.py): 2,444,960,482
GEMMA_BYTES = 2 * 12_187_325_040         # te_gemma_3_12b_it: 24,374,650,080


def checkpoint() -> dict:
    """{name: {dtype, shape}} of the single-file checkpoint, under the names ComfyUI 0.8.0 reads it by."""
    out = {}
    for k, v in layouts.load("ltx-2_ltx-2-19b_bf16")["tensors"].items():
        out["model.diffusion_model." + k] = v
    for k, v in layouts.load("te_ltx-2_text_connectors")["tensors"].items():
        out["text_embedding_projection.aggregate_embed.weight" if k == "text_embedding_projection.weight"
            else "model.diffusion_model." + k] = v
    for k, v in layouts.load("vae_ltx-2_video_vae")["tensors"].items():
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


def loaded_clip() -> dict:
    """LTXAVTEModel's state dict as ComfyUI 0.8.0 holds it after LTXAVTextEncoderLoader (text_encoders/lt.py:66-87):
    Gemma 3 12B under gemma3_12b.transformer.*, the projection and the two connectors under their own names (checked:
    the class built on the meta device has these four heads and 1,125 keys, the one more being the scalar
    gemma3_12b.logit_scale, left out here)."""
    t = {"gemma3_12b.transformer." + k: v for k, v in layouts.table("te_gemma_3_12b_it").items()}
    return t | layouts.table("te_ltx-2_text_connectors")


def test_the_loaded_ltx2_clip_splits_into_gemma_and_the_connectors():
    # the Footprint Estimate node reads a wired CLIP by its heads (families.split_by_head): the three connector heads
    # were each 'not a text encoder', so the whole 27 GB went in as one 'ltx-2-connectors' component
    got = [(c["kind"], families.table_bytes(c["table"])) for c in families.split_by_head(loaded_clip(), "text_encoder")]
    assert got == [("gemma", GEMMA_BYTES), ("ltx-2-connectors", TEXT_BYTES)]


def test_the_node_and_the_cli_give_ltx2s_text_encode_alike():
    # the node's components (a loaded CLIP) and the CLI's (Gemma's file and the checkpoint's text part) price the same
    # text encode: they hold the same tensors
    from gpu_garden.memory.estimate import formula
    dm = {"role": "diffusion_model", "table": layouts.table("ltx-2_ltx-2-19b_bf16"), "source": "dm"}
    node = [dict(c, source="CLIP") for c in families.split_by_head(loaded_clip(), "text_encoder")]
    cli = families.split_components(layouts.table("te_gemma_3_12b_it"), GEMMA) + \
        [c for c in families.split_components(_table(checkpoint()), CKPT) if c["role"] == "text_encoder"]
    a, b = (formula.estimate([dm] + te, 768, 512, 97) for te in (node, cli))
    assert a["weights"]["text_encoders"] == b["weights"]["text_encoders"] == GEMMA_BYTES + TEXT_BYTES
    assert a["phases"]["text_encode"] == b["phases"]["text_encode"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    layouts.write_sparse({"tensors": checkpoint()}, d / "checkpoints" / CKPT)
    layouts.write_sparse("te_gemma_3_12b_it", d / "text_encoders" / GEMMA)
    layouts.write_sparse("ltx-2_ltx-2-19b_bf16", d / "diffusion_models" / "ltx-2-19b-transformer.safetensors")
    return d


def ui_ltx2(unet=False):
    """LTX-2's text-to-audio-video graph as ComfyUI 0.8.0's nodes save it (widgets in schema order: nodes_lt_audio.py
    l.17-21, l.180-188, l.104-128; nodes_lt.py EmptyLTXVLatentVideo width, height, length, batch_size)."""
    model = {"id": 1, "type": "UNETLoader", "widgets_values": ["ltx-2-19b-transformer.safetensors", "default"]} if unet \
        else {"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": [CKPT]}
    n = [model,
         {"id": 2, "type": "LTXAVTextEncoderLoader", "widgets_values": [GEMMA, CKPT]},
         {"id": 3, "type": "LTXVAudioVAELoader", "widgets_values": [CKPT]},
         {"id": 4, "type": "EmptyLTXVLatentVideo", "widgets_values": [768, 512, 97, 1]},
         {"id": 5, "type": "LTXVEmptyLatentAudio", "widgets_values": [97, 25, 1]},
         {"id": 6, "type": "KSampler", "widgets_values": [1, "fixed", 20, 4.0, "euler", "simple", 1.0]}]
    return {"last_node_id": 6, "nodes": n, "links": [], "extra": {}, "version": 0.4}


def api_ltx2():
    return {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": CKPT}},
            "2": {"class_type": "LTXAVTextEncoderLoader", "inputs": {"text_encoder": GEMMA, "ckpt_name": CKPT}},
            "3": {"class_type": "LTXVAudioVAELoader", "inputs": {"ckpt_name": CKPT}},
            "4": {"class_type": "EmptyLTXVLatentVideo", "inputs": {"width": 768, "height": 512, "length": 97, "batch_size": 1}},
            "6": {"class_type": "KSampler", "inputs": {"cfg": 4.0, "model": ["1", 0]}}}


def run(tmp_path, wf, models, capsys):
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(wf))
    rc = cli.main(["estimate", "--workflow", str(p), "--models-dir", str(models), "--vram", "80", "--json"])
    return rc, json.loads(capsys.readouterr().out)


def _parts(out):
    return sorted((c["role"], c["source"], c["bytes"]) for c in out["components"])


@pytest.mark.parametrize("wf", [ui_ltx2(), api_ltx2()], ids=["ui", "api"])
def test_a_workflow_with_ltx2s_loaders_counts_the_checkpoint_once(models, tmp_path, capsys, wf):
    rc, out = run(tmp_path, wf, models, capsys)
    assert out["family"] == "ltx-2" and out["workflow"]["missing"] == []
    assert out["workflow"]["files"] == [CKPT, GEMMA]
    assert _parts(out) == sorted([("diffusion_model", CKPT, DM_BYTES), ("text_encoder", CKPT, TEXT_BYTES),
                                  ("vae", CKPT, VAE_BYTES), ("other", CKPT, AUDIO_BYTES),
                                  ("text_encoder", GEMMA, GEMMA_BYTES)])
    assert out["weights"]["text_encoders"] == GEMMA_BYTES + TEXT_BYTES  # 27,237,600,480: Gemma and LTXAVTEModel's part


def test_the_ltx2_loaders_take_only_their_part_of_the_checkpoint(models, tmp_path, capsys):
    # the diffusion model from UNETLoader; the checkpoint is named only by LTXAVTextEncoderLoader (its text part) and
    # LTXVAudioVAELoader (its audio VAE): no second diffusion model, no video VAE from it
    rc, out = run(tmp_path, ui_ltx2(unet=True), models, capsys)
    assert _parts(out) == sorted([("diffusion_model", "ltx-2-19b-transformer.safetensors", DM_BYTES),
                                  ("text_encoder", CKPT, TEXT_BYTES), ("other", CKPT, AUDIO_BYTES),
                                  ("text_encoder", GEMMA, GEMMA_BYTES)])


def test_widget_names_and_roles_follow_the_schemas():
    assert workflow._ui_widgets("LTXAVTextEncoderLoader", [GEMMA, CKPT]) == {"text_encoder": GEMMA, "ckpt_name": CKPT}
    assert workflow._ui_widgets("LTXVAudioVAELoader", [CKPT]) == {"ckpt_name": CKPT}
    # folder_paths.py:23, :28: "checkpoints" is models/checkpoints; "text_encoders" also reads models/clip
    assert dict(workflow.LOADERS["LTXAVTextEncoderLoader"]) == {"text_encoder": ("text_encoders", "clip"),
                                                               "ckpt_name": ("checkpoints",)}
    assert workflow.files_by_role(api_ltx2()) == {"diffusion_model": [CKPT], "vae": [CKPT],
                                                  "text_encoder": [CKPT, GEMMA, CKPT], "other": [CKPT]}


def test_the_audio_latent_follows_the_audio_nodes_frame_rate():
    # nodes_lt_audio.py:146-158, audio_vae.py:235-236, 268-271: ceil(frames_number / frame_rate x 16000 / 160 / 4)
    assert spec.audio_tokens("ltx-2", 97) == 97                  # ceil(97 / 25 x 25) = ceil(97.0)
    assert spec.audio_tokens("ltx-2", 97, 24) == 102             # ceil(97 / 24 x 25) = ceil(101.04)
    assert spec.audio_tokens("ltx-2", 121, 30) == 101            # ceil(121 / 30 x 25) = ceil(100.83)
    g = phases.latent_geometry("ltx-2", 768, 512, 97, audio_fps=24)
    assert (g["audio_tokens"], g["elements"]) == (102, 128 * 4992 + 8 * 102 * 16)   # 638,976 + 13,056


@pytest.mark.parametrize("fmt", ["ui", "api"])
def test_a_workflows_audio_frame_rate_reaches_the_estimate(models, tmp_path, capsys, fmt):
    wf = ui_ltx2() if fmt == "ui" else dict(api_ltx2(), **{"5": {"class_type": "LTXVEmptyLatentAudio", "inputs": {
        "frames_number": 97, "frame_rate": 24, "batch_size": 1, "audio_vae": ["3", 0]}}})
    if fmt == "ui":
        wf["nodes"][4]["widgets_values"] = [97, 24, 1]
    rc, out = run(tmp_path, wf, models, capsys)
    assert (out["latent"]["image_tokens"], out["latent"]["tokens"]) == (4992, 4992 + 102)
    # ComfyUI's memory_required over the packed latent, B 2 (CFG 4.0): 2 x 652,032 x 2 B x 0.01 x 0.055 MiB
    assert out["comfyui_memory_required"] == int(2 * 652_032 * 2 * 0.01 * 0.055 * MiB)
    assert any("at 24 frames a second" in a for a in out["assumptions"])


def test_an_audio_length_other_than_the_videos_is_named(models, tmp_path, capsys):
    wf = ui_ltx2()
    wf["nodes"][4]["widgets_values"] = [121, 25, 1]
    rc, out = run(tmp_path, wf, models, capsys)
    assert out["latent"]["tokens"] == 4992 + 97
    assert any("frames_number 121 is not the video's length 97" in a for a in out["assumptions"])
