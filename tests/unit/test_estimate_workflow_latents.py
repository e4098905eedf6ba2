"""hv16: `estimate --workflow` reads every ComfyUI 0.8.0 node that makes a latent or sets its size
(memory/estimate/latent_nodes.py), HunyuanVideo 1.5's two among them. Expected shapes are hand-computed from the nodes'
source (ComfyUI 0.8.0 comfy_extras/nodes_hunyuan.py), not from the code under test.
Deliberate errors checked to fail: the old workflow.py (its LATENTS table knew neither HunyuanVideo 1.5 node: every
hv15 case raised 'no latent size'); the EmptyHunyuanVideo15Latent row deleted; the HunyuanVideo15ImageToVideo row's
widgets in the order width, length, height; WanMoveTrackToVideo's strength widget dropped; SVD's video_frames role
dropped; VAEEncode's row deleted."""
import pytest

from gpu_garden.memory.estimate import latent_nodes, layouts, report, workflow

HV15 = "hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    layouts.write_sparse(HV15, d / "diffusion_models" / "hv15_t2v.safetensors")
    layouts.write_sparse("vae_hunyuan_video_1.5_vae", d / "vae" / "hv15_vae.safetensors")
    return d


def _ui(latent_type, widgets):
    n = [{"id": 1, "type": "UNETLoader", "widgets_values": ["hv15_t2v.safetensors", "default"]},
         {"id": 2, "type": "VAELoader", "widgets_values": ["hv15_vae.safetensors"]},
         {"id": 3, "type": latent_type, "widgets_values": widgets,
          "inputs": [{"name": "vae", "type": "VAE", "link": 1}] if "ImageToVideo" in latent_type else []}]
    return {"last_node_id": 3, "nodes": n, "links": [[1, 2, 0, 3, 2, "VAE"]], "extra": {}, "version": 0.4}


def _api(latent_type, **inputs):
    if "ImageToVideo" in latent_type:
        inputs.update(positive=["4", 0], negative=["5", 0], vae=["2", 0])
    return {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "hv15_t2v.safetensors", "weight_dtype": "default"}},
            "2": {"class_type": "VAELoader", "inputs": {"vae_name": "hv15_vae.safetensors"}},
            "3": {"class_type": latent_type, "inputs": inputs}}


# nodes_hunyuan.py:75 (EmptyHunyuanVideo15Latent) and :105 (HunyuanVideo15ImageToVideo), the same shape:
#   [batch_size, 32, ((length - 1) // 4) + 1, height // 16, width // 16]
@pytest.mark.parametrize("wf, shape", [
    # UI t2v 1280x720, 121 frames: (121 - 1) // 4 + 1 = 31, 720 // 16 = 45, 1280 // 16 = 80
    (_ui("EmptyHunyuanVideo15Latent", [1280, 720, 121, 1]), [1, 32, 31, 45, 80]),
    # API t2v 848x480, 25 frames (the node's defaults): (25 - 1) // 4 + 1 = 7, 480 // 16 = 30, 848 // 16 = 53
    (_api("EmptyHunyuanVideo15Latent", width=848, height=480, length=25, batch_size=1), [1, 32, 7, 30, 53]),
    # UI i2v 640x368, 33 frames, batch 2: (33 - 1) // 4 + 1 = 9, 368 // 16 = 23, 640 // 16 = 40
    (_ui("HunyuanVideo15ImageToVideo", [640, 368, 33, 2]), [2, 32, 9, 23, 40]),
    # API i2v 960x544, 49 frames: (49 - 1) // 4 + 1 = 13, 544 // 16 = 34, 960 // 16 = 60
    (_api("HunyuanVideo15ImageToVideo", width=960, height=544, length=49, batch_size=1), [1, 32, 13, 34, 60]),
], ids=["ui-t2v", "api-t2v", "ui-i2v", "api-i2v"])
def test_hunyuan_video_15_latent_nodes_give_the_sampled_shape(models, wf, shape):
    est = workflow.estimate_workflow(wf, models, policy={"budget": None})
    assert est["family"] == "hunyuan-video-15"
    assert est["latent"]["shape"] == shape
    assert est["workflow"]["latent_families"] == {wf_type(wf): "hunyuan-video-15"}
    assert not any("latent (" in a and "follows the model file" in a for a in est["assumptions"])  # the family agrees


def wf_type(wf):
    return wf["nodes"][2]["type"] if "nodes" in wf else wf["3"]["class_type"]


# Every ComfyUI 0.8.0 node (nodes.py, comfy_extras/*.py) with a LATENT output that makes a latent or sets its size,
# from reading each class with one (the ones that pass a latent through at its own size are left out): written out here,
# not read from the table, so a row deleted from latent_nodes.LATENT_NODES fails.
AUDIT = """
EmptyLatentImage EmptySD3LatentImage EmptyFlux2LatentImage EmptyHunyuanImageLatent EmptyChromaRadianceLatentImage
EmptyQwenImageLayeredLatentImage StableCascade_EmptyLatentImage StableZero123_Conditioning
StableZero123_Conditioning_Batched SV3D_Conditioning SVD_img2vid_Conditioning
EmptyHunyuanLatentVideo EmptyHunyuanVideo15Latent HunyuanVideo15ImageToVideo HunyuanImageToVideo EmptyMochiLatentVideo
EmptyLTXVLatentVideo LTXVImgToVideo EmptyCosmosLatentVideo CosmosImageToVideoLatent CosmosPredict2ImageToVideoLatent
Kandinsky5ImageToVideo Wan22ImageToVideoLatent WanImageToVideo WanFunControlToVideo Wan22FunControlToVideo
WanFirstLastFrameToVideo WanFunInpaintToVideo WanVaceToVideo WanCameraImageToVideo WanPhantomSubjectToVideo
WanTrackToVideo WanSoundImageToVideo WanHuMoImageToVideo WanAnimateToVideo WanMoveTrackToVideo
LatentUpscale LatentCrop HunyuanVideo15LatentUpscaleWithModel
VAEEncode VAEEncodeTiled VAEEncodeForInpaint InpaintModelConditioning InstructPixToPixConditioning LoadLatent
LatentUpscaleBy LTXVLatentUpsampler HunyuanVideo15SuperResolution HunyuanRefinerLatent WanSoundImageToVideoExtend
StableCascade_StageC_VAEEncode StableCascade_SuperResolutionControlnet SD_4XUpscale_Conditioning
EmptyLatentAudio EmptyAceStepLatentAudio LTXVEmptyLatentAudio VAEEncodeAudio LTXVAudioVAEEncode EmptyLatentHunyuan3Dv2
""".split()


def test_every_audited_node_is_in_the_table():
    assert len(AUDIT) == len(set(AUDIT)) == 59
    missing = [n for n in AUDIT if n not in latent_nodes.LATENT_NODES]
    assert not missing, missing
    for n in AUDIT:
        row = latent_nodes.LATENT_NODES[n]
        assert row.kind in ("size", "resize", "scale", "input", "other") and row.src, n
        if row.kind in ("size", "resize"):  # a size node reads width and height from its widgets (or its roles; a
            # 1-D latent's height is fixed: EmptyLatentHunyuan3Dv2's resolution is its width, h3d63)
            have = set(latent_nodes.widget_names(n)) | {r for _, r in row.roles} | ({"height"} if row.height else set())
            assert {"width", "height"} <= have, n
        else:
            assert row.takes, n  # what the size comes from, for the assumption


def _read(node, widgets):
    return workflow.read({"nodes": [{"id": 1, "type": node, "widgets_values": widgets}], "links": []}, None)


@pytest.mark.parametrize("node, widgets, size", [
    # nodes_wanmove.py:460: strength comes before width in the UI (1.0, 640, 368, 33, 1)
    ("WanMoveTrackToVideo", [1.0, 640, 368, 33, 1], (640, 368, 33, 1)),
    # nodes_wan.py:702: tracks (a string) first, temperature and topk after batch_size
    ("WanTrackToVideo", ["[]", 832, 480, 81, 2, 220.0, 2], (832, 480, 81, 2)),
    # nodes_stable_cascade.py:27: compression sits between height and batch_size
    ("StableCascade_EmptyLatentImage", [1024, 1536, 42, 3], (1024, 1536, 1, 3)),
    # nodes_video_model.py:26: video_frames is the latent's batch ([video_frames, 4, H/8, W/8], l.56)
    ("SVD_img2vid_Conditioning", [1024, 576, 14, 127, 6, 0.0], (1024, 576, 1, 14)),
])
def test_ui_widget_order_per_node(node, widgets, size):
    assert _read(node, widgets)["size"] == size


def test_a_size_from_an_input_image_is_an_assumption_with_the_size_used(models):
    # LoadImage -> VAEEncode -> KSampler: the size is the image's, not a widget. HunyuanVideo 1.5's native size is
    # nodes_hunyuan.py:46-48 (EmptyHunyuanVideo15Latent's inherited defaults) 848x480, 25 frames -> [1, 32, 7, 30, 53]
    wf = _api("VAEEncode", pixels=["9", 0], vae=["2", 0])
    est = workflow.estimate_workflow(wf, models, policy={"budget": None})
    assert est["latent"]["shape"] == [1, 32, 7, 30, 53]
    assert ("VAEEncode takes its latent size from its input image, not a widget: estimated at 848x480, 25 frames "
            "(the native size of HunyuanVideo 1.5; --width/--height for another)") in est["assumptions"]
    # the report's header marks the size it assumed where the size is printed, not only 46 lines down
    head = report.format_text(est).splitlines()[0]
    assert "at 848x480x25f (assumed: the native size of HunyuanVideo 1.5), batch 1," in head, head
    # only --width typed: the height is the native size's, and both the assumption and the header say which
    est = workflow.estimate_workflow(wf, models, width=640, policy={"budget": None})
    assert est["latent"]["shape"] == [1, 32, 7, 30, 40]
    assert ("VAEEncode takes its latent size from its input image, not a widget: estimated at 640x480, 25 frames "
            "(width from --width, height from the native size of HunyuanVideo 1.5)") in est["assumptions"]
    assert "at 640x480x25f (height assumed: the native size of HunyuanVideo 1.5)," in report.format_text(est)
    # with a latent node beside it, that node's size is used and said
    wf["4"] = {"class_type": "EmptyMochiLatentVideo", "inputs": {"width": 640, "height": 480, "length": 25, "batch_size": 1}}
    est = workflow.estimate_workflow(wf, models, policy={"budget": None})
    assert est["latent"]["shape"] == [1, 32, 7, 30, 40]  # 640 // 16 = 40
    assert any(a.startswith("VAEEncode takes its latent size") and a.endswith("(the graph's latent node)")
               for a in est["assumptions"])
    # the Mochi node implies another family than the model file's: said, and the file's family is estimated
    assert any(a.startswith("EmptyMochiLatentVideo makes a Mochi latent (mochi); the diffusion model is hunyuan-video-15")
               for a in est["assumptions"]), est["assumptions"]


@pytest.mark.parametrize("layers, note", [
    (5, "layers + 1 = 6 images"),
    (True, "layers + 1 = 4 images"),  # a JSON true is not 1 layer: the node's default 3 (nodes_qwen.py:119)
    ("x", "layers + 1 = 4 images"),
    (16384, "layers + 1 = 16385 images"),  # ComfyUI's max, nodes.MAX_RESOLUTION
    (16385, "outside ComfyUI's range 0 to 16384"),
    (10**30, "outside ComfyUI's range 0 to 16384"),
    (-1, "outside ComfyUI's range 0 to 16384"),
])
def test_qwen_layered_layers_widget(layers, note):
    # deliberate errors checked: the old isinstance(.., int) test (True -> "layers + 1 = 2", 10**30 printed verbatim)
    notes = [n for n in _read("EmptyQwenImageLayeredLatentImage", [640, 640, layers, 1])["notes"] if "layers" in n]
    assert len(notes) == 1 and note in notes[0] and "1000000000000" not in notes[0], notes


# spec.NATIVE_SIZE's entries that cite a ComfyUI latent node (its comment) -> that node: pinned, not derived (the
# other entries cite a model card or a node that makes no latent, CLIPTextEncodeSDXL, ModelSamplingFlux, ...)
NATIVE_FROM_NODE = {"sd1": "EmptyLatentImage", "sd3": "EmptySD3LatentImage", "flux2": "EmptyFlux2LatentImage",
                    "chroma": "EmptyChromaRadianceLatentImage", "hunyuan-image": "EmptyHunyuanImageLatent",
                    "wan21": "WanImageToVideo", "wan22": "Wan22ImageToVideoLatent",
                    "hunyuan-video": "EmptyHunyuanLatentVideo", "hunyuan-video-15": "EmptyHunyuanVideo15Latent",
                    "ltxv": "EmptyLTXVLatentVideo", "mochi": "EmptyMochiLatentVideo", "cosmos": "EmptyCosmosLatentVideo"}


@pytest.mark.parametrize("fam, node", NATIVE_FROM_NODE.items())
def test_native_size_is_the_latent_nodes_default(fam, node):
    # mend55: the same defaults live in two tables; deliberate error checked: wan22's NATIVE_SIZE frames 49 -> 121
    from gpu_garden.memory.estimate import spec
    d = dict(latent_nodes.LATENT_NODES[node].widgets)
    assert spec.NATIVE_SIZE[fam] == (d["width"], d["height"], d.get("length", 1))
