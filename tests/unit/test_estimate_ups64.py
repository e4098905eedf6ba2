"""ups64: the hires fix with an upscale model, followed through its second pass, and an upscale model not found.

1. The graph (modelled on the structure of ComfyUI_examples' "2 pass txt2img" hires fix, its sizes and names this
   test's): EmptyLatentImage -> KSampler -> VAEDecode -> ImageUpscaleWithModel -> ImageScaleBy -> VAEEncode -> KSampler
   (denoise 0.5) -> VAEDecode -> SaveImage. ImageUpscaleWithModel's output is round(side x scale) a side
   (comfy_extras/nodes_upscale_model.py:86 tiled_scale(upscale_amount=scale), comfy/utils.py:1027-1033), the scale read
   from the model file (pixel_upscale.detect): the second pass samples and decodes input x scale x the ImageScaleBy
   factor; the pixel_upscale phase's image stays the first pass's decode. Before ups64 links.image stopped at
   ImageUpscaleWithModel (and at the VAE decode): the second pass was estimated at the first pass's size.
2. An UpscaleModelLoader whose file is not under the models folder: missing, as a ControlNet's (fix63): the estimate is
   incomplete and --write refuses (ComfyUI refuses the prompt: value_not_in_list, or get_full_path_or_raise,
   nodes_upscale_model.py:35). Before ups64 it was only named.

The model files are the ups63 tests' hand-made ones: RRDBNet x4 (old ESRGAN keys, a sparse .safetensors header) and
SRVGGNetCompact (realesr-general's layout; its last conv's 12 = 3 x 2^2 output channels make it x2) saved by torch.save
as a .pth. Expected figures by hand in each test."""
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import layouts, workflow, workflow_write
from support.upscale_models import compact, rrdb_old
from test_estimate_ups63 import _sparse, _tensors

torch = pytest.importorskip("torch")

IMAGE = 3 * 4  # fp32 RGB bytes a pixel (pixel_upscale.COMFY image_bytes)


def _models(tmp_path):
    d = tmp_path / "models"
    layouts.write_sparse("sdxl_sd_xl_base_1.0", d / "checkpoints" / "sdxl.safetensors")
    _sparse(rrdb_old(), d / "upscale_models" / "4x-UltraSharp.safetensors")
    x2 = compact()
    x2["body.66.weight"], x2["body.66.bias"] = ("F32", [12, 64, 3, 3]), ("F32", [12])  # 3 x 2^2: x2
    (d / "upscale_models").mkdir(parents=True, exist_ok=True)
    torch.save({"params": _tensors(x2)}, d / "upscale_models" / "realesr-x2.pth")
    return d


def _api(model="4x-UltraSharp.safetensors", w=512, h=512, by=0.5):
    return {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
            "2": {"class_type": "EmptyLatentImage", "inputs": {"width": w, "height": h, "batch_size": 1}},
            "3": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": ["2", 0], "cfg": 7.0,
                                                       "denoise": 1.0}},
            "4": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["1", 2]}},
            "5": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": model}},
            "6": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": ["4", 0]}},
            "7": {"class_type": "ImageScaleBy", "inputs": {"image": ["6", 0], "upscale_method": "lanczos", "scale_by": by}},
            "8": {"class_type": "VAEEncode", "inputs": {"pixels": ["7", 0], "vae": ["1", 2]}},
            "9": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": ["8", 0], "cfg": 7.0,
                                                       "denoise": 0.5}},
            "10": {"class_type": "VAEDecode", "inputs": {"samples": ["9", 0], "vae": ["1", 2]}},
            "11": {"class_type": "SaveImage", "inputs": {"images": ["10", 0]}}}


def _ui(model="realesr-x2.pth", w=768, h=512, by=0.75):
    """The same graph as the frontend saves it, the upscale model through a Reroute."""
    n = [{"id": 1, "type": "CheckpointLoaderSimple", "outputs": [{"links": [1, 7]}, {"links": []}, {"links": [4, 9, 12]}],
          "widgets_values": ["sdxl.safetensors"]},
         {"id": 2, "type": "EmptyLatentImage", "outputs": [{"links": [2]}], "widgets_values": [w, h, 1]},
         {"id": 3, "type": "KSampler", "inputs": [{"name": "model", "link": 1}, {"name": "latent_image", "link": 2}],
          "outputs": [{"links": [3]}], "widgets_values": [1, "fixed", 20, 7.0, "euler", "normal", 1.0]},
         {"id": 4, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 3}, {"name": "vae", "link": 4}],
          "outputs": [{"links": [5]}]},
         {"id": 5, "type": "UpscaleModelLoader", "outputs": [{"links": [13]}], "widgets_values": [model]},
         {"id": 12, "type": "Reroute", "inputs": [{"name": "", "link": 13}], "outputs": [{"links": [6]}]},
         {"id": 6, "type": "ImageUpscaleWithModel", "inputs": [{"name": "upscale_model", "link": 6}, {"name": "image", "link": 5}],
          "outputs": [{"links": [8]}]},
         {"id": 7, "type": "ImageScaleBy", "inputs": [{"name": "image", "link": 8}], "outputs": [{"links": [10]}],
          "widgets_values": ["lanczos", by]},
         {"id": 8, "type": "VAEEncode", "inputs": [{"name": "pixels", "link": 10}, {"name": "vae", "link": 9}],
          "outputs": [{"links": [11]}]},
         {"id": 9, "type": "KSampler", "inputs": [{"name": "model", "link": 7}, {"name": "latent_image", "link": 11}],
          "outputs": [{"links": [14]}], "widgets_values": [1, "fixed", 20, 7.0, "euler", "normal", 0.5]},
         {"id": 10, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 14}, {"name": "vae", "link": 12}],
          "outputs": [{"links": [15]}]},
         {"id": 11, "type": "SaveImage", "inputs": [{"name": "images", "link": 15}]}]
    lk = [[1, 1, 0, 3, 0, "MODEL"], [2, 2, 0, 3, 1, "LATENT"], [3, 3, 0, 4, 0, "LATENT"], [4, 1, 2, 4, 1, "VAE"],
          [5, 4, 0, 6, 1, "IMAGE"], [13, 5, 0, 12, 0, "UPSCALE_MODEL"], [6, 12, 0, 6, 0, "UPSCALE_MODEL"],
          [8, 6, 0, 7, 0, "IMAGE"], [9, 1, 2, 8, 1, "VAE"], [10, 7, 0, 8, 0, "IMAGE"], [11, 8, 0, 9, 1, "LATENT"],
          [7, 1, 0, 9, 0, "MODEL"], [14, 9, 0, 10, 0, "LATENT"], [12, 1, 2, 10, 1, "VAE"], [15, 10, 0, 11, 0, "IMAGE"]]
    return {"nodes": n, "links": lk}


# -- 1: the second pass ------------------------------------------------------------------------------------------------

def test_api_hires_fix_x4_then_half_samples_the_second_pass_at_twice_the_first(tmp_path):
    """512 x 512 -> x4 -> 2048 -> ImageScaleBy 0.5 -> 1024 x 1024 encoded and sampled (old code: 512 x 512). The upscale
    phase's image is the first pass's decode, 512 x 512: 512*512*12 = 3,145,728 bytes + one 512 x 512 tile at 8,204 bytes
    a pixel (2,150,629,376)."""
    est = workflow.estimate_workflow(_api(), _models(tmp_path))
    assert (est["width"], est["height"]) == (1024, 1024)
    assert est["breakdown"]["pixel_upscale"]["activations"] == 512 * 512 * IMAGE + 8_204 * 512 * 512 == 2_153_775_104
    lines = " | ".join(est["assumptions"])
    assert "VAEEncode encodes an image of 1024x1024, larger than the latent node's 512x512" in lines
    assert "512x512 image (the decode of the graph's latent) to 2048x2048" in lines
    assert est["workflow"]["missing"] == []


def test_ui_hires_fix_x2_pth_through_a_reroute(tmp_path):
    """768 x 512 -> x2 (the .pth's last conv, 12 channels) -> 1536 x 1024 -> ImageScaleBy 0.75 -> 1152 x 768 (old code:
    768 x 512). Compact's tile: 524 bytes a pixel of min(512, side)^2 = 512 x 512; its image 768*512*12 = 4,718,592."""
    est = workflow.estimate_workflow(_ui(), _models(tmp_path))
    assert (est["width"], est["height"]) == (1152, 768)
    assert est["breakdown"]["pixel_upscale"]["activations"] == 768 * 512 * IMAGE + 524 * 512 * 512 == 142_082_048
    assert any("768x512 image (the decode of the graph's latent) to 1536x1024" in a for a in est["assumptions"])


def test_the_cli_json_reports_the_second_passs_size(tmp_path, capsys):
    from support.cli_run import estimate_workflow

    d = _models(tmp_path)
    rc, out, err = estimate_workflow(tmp_path, capsys, _api(), "--models-dir", str(d), "--json")
    assert rc == 0, err
    got = json.loads(out)
    assert (got["width"], got["height"]) == (1024, 1024)


def test_the_footprint_estimate_node_in_the_latent_path_passes_the_first_pass_through(tmp_path):
    """This pack's node between the latent and the first KSampler (its documented place: it passes the latent through,
    nodes/estimate.py) does not hide the first pass's size: the second pass is still 1024 x 1024."""
    wf = _api()
    wf["20"] = {"class_type": "GPUGardenFootprintEstimate", "inputs": {"model": ["1", 0], "latent": ["2", 0],
                                                                       "width": 1024, "height": 1024, "batch": 1}}
    wf["3"]["inputs"]["latent_image"] = ["20", 0]
    est = workflow.estimate_workflow(wf, _models(tmp_path))
    assert (est["width"], est["height"]) == (1024, 1024)


def test_a_typed_size_wins_and_the_upscale_takes_its_decode(tmp_path):
    """--width/--height typed: every phase at the typed size, the upscale's image the decode of the typed latent (as
    before ups64: the typed size wins over the graph's)."""
    est = workflow.estimate_workflow(_api(), _models(tmp_path), width=768, height=768)
    assert (est["width"], est["height"]) == (768, 768)
    assert est["breakdown"]["pixel_upscale"]["activations"] == 768 * 768 * IMAGE + 8_204 * 512 * 512


@pytest.mark.parametrize("model, says", [
    ("SwinIR.safetensors", "its scale is not read: its keys are none of ESRGAN's"),
    ("not-here.pth", "not found under the models folder"),
])
def test_an_upscale_model_whose_scale_is_not_read_leaves_the_second_pass_unread_and_says_so(tmp_path, model, says):
    """The scale not known: the encoded image's size is not read (as for any image the estimate does not know), the
    first pass's latent is estimated, and a line names the model and why."""
    d = _models(tmp_path)
    _sparse({"conv_first.weight": ("F32", [180, 3, 3, 3])}, d / "upscale_models" / "SwinIR.safetensors")
    est = workflow.estimate_workflow(_api(model), d)
    assert (est["width"], est["height"]) == (512, 512)
    line = [a for a in est["assumptions"] if "the size of the image it makes is not known" in a]
    assert line and f"its upscale model {model} is not read" in line[0] and says in line[0], est["assumptions"]


def test_an_image_known_by_its_area_is_upscaled_by_its_area(tmp_path):
    """LoadImage with no input folder (its size not read) -> ImageScaleToTotalPixels 1 MP -> x4 -> VAEEncode: the encoded
    image's area is 1,048,576 x 4^2 = 16,777,216 pixels, estimated as a square of it, 4096 x 4096 (old code: the family's
    native size, SDXL's 1024 x 1024)."""
    wf = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
          "2": {"class_type": "LoadImage", "inputs": {"image": "photo.png"}},
          "3": {"class_type": "ImageScaleToTotalPixels", "inputs": {"image": ["2", 0], "upscale_method": "lanczos",
                                                                     "megapixels": 1.0}},
          "5": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "4x-UltraSharp.safetensors"}},
          "6": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": ["3", 0]}},
          "8": {"class_type": "VAEEncode", "inputs": {"pixels": ["6", 0], "vae": ["1", 2]}},
          "9": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": ["8", 0], "cfg": 7.0}},
          "10": {"class_type": "VAEDecode", "inputs": {"samples": ["9", 0], "vae": ["1", 2]}},
          "11": {"class_type": "SaveImage", "inputs": {"images": ["10", 0]}}}
    est = workflow.estimate_workflow(wf, _models(tmp_path))
    assert (est["width"], est["height"]) == (4096, 4096)


def test_a_decode_of_an_upscaled_latent_is_followed(tmp_path):
    """A decode of a LatentUpscaleBy's latent: fix66h (rev66d R1) follows it (links.latent stopped there before and the
    estimate was the upscale's own 768): 512 px = 64 latent px x 1.5 = 96 -> 768 px (nodes.py:1310), decoded, x4 by
    the model = 3072, ImageScaleBy 0.5 = 1536 px, encoded and sampled: the second pass is 1536 x 1536."""
    wf = _api()
    wf["12"] = {"class_type": "LatentUpscaleBy", "inputs": {"samples": ["3", 0], "upscale_method": "nearest-exact",
                                                            "scale_by": 1.5}}
    wf["4"]["inputs"]["samples"] = ["12", 0]
    est = workflow.estimate_workflow(wf, _models(tmp_path))
    assert (est["width"], est["height"]) == (1536, 1536)


# -- 2: the upscale model not found --------------------------------------------------------------------------------------

def test_an_upscale_model_not_found_makes_the_estimate_incomplete_and_write_refuses(tmp_path):
    from gpu_garden.memory.estimate import formula

    g = _ui(model="4x-NotHere.pth")
    est = workflow.estimate_workflow(g, _models(tmp_path))
    formula.judge(est, 24 << 30)
    assert est["outcome"]["status"] == "incomplete" and est["workflow"]["missing"] == ["4x-NotHere.pth"]
    assert est["workflow"]["missing_where"][0]["folders"] == ["upscale_models"]
    assert "not found under the models folder: 4x-NotHere.pth (UpscaleModelLoader.model_name)" in est["assumptions"]
    with pytest.raises(UserError, match="nothing written: the estimate is incomplete"):
        workflow_write.write(g, est, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


def test_an_upscale_model_not_found_that_never_runs_is_not_read(tmp_path):
    """ImageUpscaleWithModel feeding no output (its SaveImage gone): neither it nor its loader runs; nothing missing."""
    g = _ui(model="4x-NotHere.pth")
    g["nodes"] = [n for n in g["nodes"] if n["id"] not in (7, 8, 9, 10, 11)]
    g["nodes"].append({"id": 13, "type": "SaveImage", "inputs": [{"name": "images", "link": 16}]})
    g["links"] = [lk for lk in g["links"] if lk[0] not in (8, 10, 11, 14, 7, 9, 12, 15)] + [[16, 4, 0, 13, 0, "IMAGE"]]
    est = workflow.estimate_workflow(g, _models(tmp_path))
    assert est["workflow"]["missing"] == [] and "pixel_upscale" not in est["phases"]
