"""img63: the size of the image a LoadImage node loads, read from its file's header, so an img2img or edit graph is
estimated at the size ComfyUI encodes (before: the node's size on the button, the family's native size, or a square of
a scale node's area). Expected values by hand from ComfyUI 0.8.0's source: LoadImage.load_image (nodes.py:1661-1707:
ImageOps.exif_transpose on each frame, frames of another size skipped, MPO first frame only), ImageScaleToTotalPixels
(comfy_extras/nodes_post_processing.py:236-245: scale = sqrt(megapixels x 1024^2 / (w x h)), sides rounded).
The graphs are hand-made on the shapes of comfyui-workflow-templates 0.7.67's img2img and Qwen-Image edit templates."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import input_image, layouts, workflow

from test_estimate_wf64 import _top
from test_estimate_wf65 import _edit, _in, _qwen_models

Image = pytest.importorskip("PIL.Image")


def _png(path, w, h, **kw):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (w, h)).save(path, **kw)
    return path


def _rotated_jpeg(path, w, h, orientation):
    path.parent.mkdir(parents=True, exist_ok=True)
    exif = Image.Exif()
    exif[0x0112] = orientation
    Image.new("RGB", (w, h)).save(path, "JPEG", exif=exif.tobytes())
    return path


def test_a_png_reads_its_size_and_one_frame(tmp_path):
    assert input_image.pixel_size(_png(tmp_path / "a.png", 1536, 1024))[:3] == (1536, 1024, 1)


@pytest.mark.parametrize("orientation,size", [(1, (1536, 1024)), (3, (1536, 1024)), (6, (1024, 1536)), (8, (1024, 1536))])
def test_an_exif_orientation_that_turns_the_photo_swaps_its_sides_as_comfyui_does(tmp_path, orientation, size):
    """A phone photo stored 1536x1024 with orientation 6 (rotate 90) is 1024x1536 after ImageOps.exif_transpose."""
    w, h, frames, how = input_image.pixel_size(_rotated_jpeg(tmp_path / "p.jpg", 1536, 1024, orientation))
    assert (w, h, frames) == size + (1,)
    assert ("EXIF-rotated" in how) == (orientation in (6, 8))


def test_an_animated_image_is_a_batch_of_its_frames(tmp_path):
    frames = [Image.new("RGB", (320, 240), (i * 60, 0, 0)) for i in range(3)]
    p = tmp_path / "anim.gif"
    frames[0].save(p, save_all=True, append_images=frames[1:])
    w, h, n, how = input_image.pixel_size(p)
    assert (w, h, n) == (320, 240, 3) and "3 frames" in how


@pytest.mark.parametrize("data", [b"", b"not an image at all\n" * 100, b"\x89PNG\r\n\x1a\n" + b"\x00" * 40])
def test_a_file_that_is_not_an_image_is_a_clear_not_read(tmp_path, data):
    p = tmp_path / "bad.png"
    p.write_bytes(data)
    with pytest.raises(input_image.NotRead, match="bad.png: not an image Pillow can read"):
        input_image.pixel_size(p)


def test_the_folder_reader_follows_comfyuis_annotations_and_never_leaves_its_folders(tmp_path):
    _png(tmp_path / "input" / "sub" / "a.png", 64, 32)
    _png(tmp_path / "output" / "b.png", 48, 16)
    _png(tmp_path / "secret.png", 8, 8)
    size = input_image.folder_reader(tmp_path / "input", tmp_path / "output")
    assert size("sub/a.png")[:2] == (64, 32)
    assert size("sub/a.png [input]")[:2] == (64, 32)
    assert size("b.png [output]")[:2] == (48, 16)
    for bad, why in (("../secret.png", "outside the input folder"), ("b.png", "not in"), ("x.png [temp]", "no temp folder")):
        with pytest.raises(input_image.NotRead, match=why):
            size(bad)


def _sd15_img2img(image="photo.png"):
    """image_to_image's shape: LoadImage -> VAEEncode -> KSampler, no latent node; a checkpoint."""
    return _top({"id": 1, "type": "LoadImage", "widgets_values": [image, "image"]},
                {"id": 2, "type": "VAEEncode", "inputs": [_in("pixels", 1), _in("vae", None, "VAE")]},
                {"id": 3, "type": "CheckpointLoaderSimple", "widgets_values": ["sd15.safetensors"]},
                links=[(1, 1, 0, 2, 0, "IMAGE")])


def _sd15(tmp_path):
    d = tmp_path / "ComfyUI" / "models"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    return d


def test_an_img2img_graph_is_estimated_at_its_loaded_images_size_not_the_native_one(tmp_path):
    d = _sd15(tmp_path)
    size = input_image.folder_reader(_png(tmp_path / "ComfyUI" / "input" / "photo.png", 768, 1152).parent)
    est = workflow.estimate_workflow(_sd15_img2img(), d, read_image=size)
    assert (est["width"], est["height"]) == (768, 1152)  # SD1.5's native 512x512 before
    assert est["workflow"]["size_assumed"] is None
    assert any("LoadImage (node 1) loads photo.png, 768x1152" in a for a in est["assumptions"])
    before = workflow.estimate_workflow(_sd15_img2img(), d)  # no reader: the native size stands, as it did
    assert (before["width"], before["height"]) == (512, 512)


def test_an_image_not_found_keeps_the_native_size_and_says_why(tmp_path):
    d = _sd15(tmp_path)
    (tmp_path / "ComfyUI" / "input").mkdir()
    est = workflow.estimate_workflow(_sd15_img2img("gone.png"), d,
                                     read_image=input_image.folder_reader(tmp_path / "ComfyUI" / "input"))
    assert (est["width"], est["height"]) == (512, 512)
    assert any("LoadImage (node 1): its size not read (gone.png: not in" in a for a in est["assumptions"])


def test_a_loaded_image_scaled_to_one_megapixel_keeps_its_aspect(tmp_path):
    """image_qwen_image_edit's shape with the photo read: 1600x900 at 1.0 MP is 1365x768 (sqrt(1048576 / 1440000) =
    1024 / 1200: 1600 x 1024 / 1200 = 1365.33 -> 1365, 900 x 1024 / 1200 = 768), not the 1024x1024 square assumed."""
    _png(tmp_path / "input" / "cat.png", 1600, 900)
    wf = _edit({"type": "ImageScaleToTotalPixels", "widgets_values": ["lanczos", 1.0, 1]})
    est = workflow.estimate_workflow(wf, _qwen_models(tmp_path), read_image=input_image.folder_reader(tmp_path / "input"))
    assert (est["width"], est["height"]) == (1365, 768)
    assert est["workflow"]["size_assumed"] is None


def test_api_format_reads_the_loaded_image_too(tmp_path):
    _png(tmp_path / "input" / "a.png", 640, 960)
    prompt = {"1": {"class_type": "LoadImage", "inputs": {"image": "a.png", "upload": "image"}},
              "2": {"class_type": "VAEEncode", "inputs": {"pixels": ["1", 0], "vae": ["3", 2]}},
              "3": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd15.safetensors"}}}
    est = workflow.estimate_workflow(prompt, _sd15(tmp_path), read_image=input_image.folder_reader(tmp_path / "input"))
    assert (est["width"], est["height"]) == (640, 960)


def _cli(capsys, *args):
    from gpu_garden.memory import cli

    try:
        rc = cli.main(["estimate", *map(str, args)])
    except SystemExit as exc:  # argparse's usage errors
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_the_command_line_reads_the_input_folder_beside_the_models_folder(tmp_path, capsys):
    d = _sd15(tmp_path)
    _png(tmp_path / "ComfyUI" / "input" / "photo.png", 896, 640)
    wf = tmp_path / "wf.json"
    wf.write_text(json.dumps(_sd15_img2img()))
    rc, out, err = _cli(capsys, "--workflow", wf, "--models-dir", d, "--vram", 24, "--json")
    assert rc == 0, err
    got = json.loads(out)
    assert (got["width"], got["height"]) == (896, 640)
    other = tmp_path / "elsewhere"
    _png(other / "photo.png", 704, 512)
    rc, out, err = _cli(capsys, "--workflow", wf, "--models-dir", d, "--vram", 24, "--json", "--input-dir", other)
    assert rc == 0, err
    assert (json.loads(out)["width"], json.loads(out)["height"]) == (704, 512)


@pytest.mark.parametrize("args,why", [(("--input-dir", "."), "give --workflow"),
                                      (("--workflow", "WF", "--input-dir", "/no/such/dir"), "--input-dir /no/such/dir: no such folder")])
def test_the_command_lines_input_dir_is_checked(tmp_path, capsys, args, why):
    d = _sd15(tmp_path)
    wf = tmp_path / "wf.json"
    wf.write_text(json.dumps(_sd15_img2img()))
    args = [str(wf) if a == "WF" else a for a in args]
    rc, _, err = _cli(capsys, *args, "--models-dir", d, *([] if "--workflow" in args else [d / "checkpoints" / "sd15.safetensors"]))
    assert rc == 2 and why in err, err


def test_the_route_reads_the_image_in_comfyuis_input_folder(monkeypatch, tmp_path):
    from support.fit_stubs import graph_route_on

    d = _sd15(tmp_path)
    _png(tmp_path / "ComfyUI" / "input" / "photo.png", 1024, 768)
    routes = graph_route_on(monkeypatch, Path(__file__).parent / "stubs", d)
    out = routes.estimate_graph({"workflow": _sd15_img2img(), "vram_gb": 8, "width": 512, "height": 512})
    assert (out["width"], out["height"]) == (1024, 768) and out["size_from"] == "graph"  # not the node's 512x512 (F1)


def test_an_imagescale_to_a_typed_size_of_an_unread_image_is_that_size(tmp_path):
    """rev63 #4: ImageScale with both sides typed scales to exactly that size whatever its input (nodes.py:1811-1823);
    the reader gave up on the unread LoadImage before reading the widgets and took the native size."""
    wf = _edit({"type": "ImageScale", "widgets_values": ["lanczos", 2048, 1536, "disabled"]})
    est = workflow.estimate_workflow(wf, _qwen_models(tmp_path))  # no reader: cat.png's own size is not known
    assert (est["width"], est["height"], est["batch"]) == (2048, 1536, 1)
    assert est["workflow"]["size_assumed"] is None
    one_side = _edit({"type": "ImageScale", "widgets_values": ["lanczos", 2048, 0, "disabled"]})  # needs the aspect
    est = workflow.estimate_workflow(one_side, _qwen_models(tmp_path))
    assert (est["width"], est["height"]) == (1328, 1328)  # Qwen-Image's native size, as before


def _latent_beside_encoded(latent=(512, 512, 1), image="photo.png"):
    """An EmptyLatentImage pass beside a second sampler on an encoded photo (rev63 #5's shape)."""
    wf = _sd15_img2img(image)
    wf["nodes"].append({"id": 5, "type": "EmptyLatentImage", "widgets_values": list(latent)})
    return wf


@pytest.mark.parametrize("photo,want", [((1024, 768), (1024, 768)), ((384, 384), (512, 512))])
def test_an_encoded_image_larger_than_the_latent_node_is_the_one_estimated(tmp_path, photo, want):
    """rev63 #5: the encoded image's size was used only when no latent node set one; the larger is estimated now, as
    between two latent nodes, and a line says so; a smaller one leaves the latent node's size."""
    d = _sd15(tmp_path)
    _png(tmp_path / "ComfyUI" / "input" / "photo.png", *photo)
    size = input_image.folder_reader(tmp_path / "ComfyUI" / "input")
    est = workflow.estimate_workflow(_latent_beside_encoded(), d, read_image=size)
    assert (est["width"], est["height"]) == want
    said = any("VAEEncode encodes an image of 1024x768, larger than the latent node's 512x512: "
               "the larger is estimated" in a for a in est["assumptions"])
    assert said == (want == (1024, 768)), est["assumptions"]
    typed = workflow.estimate_workflow(_latent_beside_encoded(), d, width=640, height=640, read_image=size)
    assert (typed["width"], typed["height"]) == (640, 640)  # typed flags win


def test_a_square_standing_in_for_an_area_does_not_beat_the_latent_nodes_own_size(tmp_path):
    """image_flux2's shape: LoadImage -> ImageScaleToTotalPixels (1 MP) -> VAEEncode, beside a latent node saved at
    1248x832: the 1024x1024 square (an area, its aspect unknown) is larger by 10,240 pixels but is no size of its own."""
    wf = _edit({"type": "ImageScaleToTotalPixels", "widgets_values": ["lanczos", 1.0, 1]})
    wf["nodes"].append({"id": 5, "type": "EmptySD3LatentImage", "widgets_values": [1248, 832, 1]})
    est = workflow.estimate_workflow(wf, _qwen_models(tmp_path))
    assert (est["width"], est["height"]) == (1248, 832)
