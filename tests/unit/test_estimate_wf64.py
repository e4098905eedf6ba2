"""wf64: `estimate --workflow` reads a linked widget from its source. ComfyUI's LTX-2 templates (Comfy-Org/workflow_templates
video_ltx2_t2v.json, frontend 1.35.9) set the latent node's width, height and length through links: a subgraph whose
inputs the instance's promoted widgets fill (properties.proxyWidgets, widgets_values in that order), the typed size
halved by EmptyImage -> ImageScaleBy 0.5 -> GetImageSize, the length from a PrimitiveInt, the audio latent's frame
rate from another; the latent node's own widgets_values keep stale values (768x512, 97) that ComfyUI never runs.
The workflows here are hand-made on that structure (other ids and values, not the template's text). Expected values
by hand from ComfyUI 0.8.0's source: ImageScaleBy round(w x scale_by) (nodes.py:1826), GetImageSize (width, height,
batch) (comfy_extras/nodes_images.py:494), PrimitiveInt's `value` (comfy_extras/nodes_primitive.py); LTX-2's stage 2
at 2 x (w // 32) x 32 (ltx64). Checked to fail on the old workflow.py (the saved widgets read, links never followed)."""
from pathlib import Path

from gpu_garden.memory.estimate import formula, layouts, workflow

SG = "5f0c2a91-sg-ltx2"
FILE = "ltx-2-spatial-upscaler-x2-1.0.safetensors"


def _w(name, link, typ="INT"):
    return {"name": name, "type": typ, "widget": {"name": name}, "link": link}


def _lk(i, src, slot, dst, dslot, typ="INT"):
    return {"id": i, "origin_id": src, "origin_slot": slot, "target_id": dst, "target_slot": dslot, "type": typ}


def ltx2_subgraph(width=1024, height=576, frames=89, fps=30, outer_links=None, top=()):
    """The template's shape: the instance's promoted widgets carry the typed size and frame count."""
    inner = [
        {"id": 20, "type": "UNETLoader", "inputs": [_w("unet_name", 111, "COMBO")],
         "widgets_values": ["stale.safetensors", "default"]},
        {"id": 21, "type": "EmptyImage", "inputs": [_w("width", 101), _w("height", 102)], "widgets_values": [width, height, 1, 0]},
        {"id": 22, "type": "ImageScaleBy", "inputs": [{"name": "image", "type": "IMAGE", "link": 103}],
         "widgets_values": ["lanczos", 0.5]},
        {"id": 23, "type": "GetImageSize", "inputs": [{"name": "image", "type": "IMAGE", "link": 104}], "widgets_values": []},
        {"id": 24, "type": "PrimitiveInt", "title": "Length", "inputs": [_w("value", 105)], "widgets_values": [frames, "fixed"]},
        {"id": 25, "type": "EmptyLTXVLatentVideo", "inputs": [_w("width", 106), _w("height", 107), _w("length", 108)],
         "widgets_values": [768, 512, 97, 1]},
        {"id": 26, "type": "PrimitiveInt", "inputs": [], "widgets_values": [fps, "fixed"]},
        {"id": 27, "type": "LTXVEmptyLatentAudio", "inputs": [{"name": "audio_vae", "type": "VAE", "link": None},
                                                            _w("frames_number", 109), _w("frame_rate", 110)],
         "widgets_values": [97, 25, 1]},
        {"id": 28, "type": "LatentUpscaleModelLoader", "inputs": [], "widgets_values": [FILE]},
        {"id": 29, "type": "LTXVLatentUpsampler", "inputs": [], "widgets_values": []},
    ]
    links = [_lk(101, -10, 0, 21, 0), _lk(102, -10, 1, 21, 1), _lk(103, 21, 0, 22, 0, "IMAGE"), _lk(104, 22, 0, 23, 0, "IMAGE"),
             _lk(105, -10, 2, 24, 0), _lk(106, 23, 0, 25, 0), _lk(107, 23, 1, 25, 1), _lk(108, 24, 0, 25, 2),
             _lk(109, 24, 0, 27, 1), _lk(110, 26, 0, 27, 2), _lk(111, -10, 4, 20, 0, "COMBO")]
    sub = {"id": SG, "name": "Text to Video (hand-made)", "inputNode": {"id": -10}, "outputNode": {"id": -20},
           "inputs": [{"name": n, "type": "INT"} for n in ("width", "height", "value", "text")] + [{"name": "unet_name", "type": "COMBO"}],
           "nodes": inner, "links": links}
    inst = {"id": 5, "type": SG, "mode": 0,
            "inputs": [dict(_w("value", None), label="frame_count")] + list(outer_links or []),
            "properties": {"proxyWidgets": [["-1", "text"], ["-1", "value"], ["-1", "width"], ["-1", "height"],
                                            ["23", "control_after_generate"], ["-1", "unet_name"]]},
            "widgets_values": ["a prompt", frames, width, height, None, "ltx2.safetensors"]}
    return {"nodes": [inst] + list(top), "links": [], "definitions": {"subgraphs": [sub]}, "version": 0.4}


def test_the_ltx2_templates_linked_size_is_read_not_the_saved_widgets():
    info = workflow.read(ltx2_subgraph(), None)
    # 1024 x 0.5 = 512, 576 x 0.5 = 288 (ImageScaleBy round), 89 frames from the PrimitiveInt the instance fills
    assert info["size"] == (512, 288, 89, 1)
    assert info["audio_fps"] == 30  # LTXVEmptyLatentAudio.frame_rate from its PrimitiveInt, not the saved 25
    assert not any("frames_number" in n and "is not the video's length" in n for n in info["notes"])
    assert [m[0] for m in info["missing"]] == ["ltx2.safetensors"]  # the unet_name the instance's widget sets
    assert any(n.startswith("EmptyLTXVLatentVideo: read through its links: width 512 (saved 768)") for n in info["notes"])


def test_the_two_stage_estimate_samples_the_linked_size_doubled(tmp_path):
    d = tmp_path / "models"
    layouts.write_sparse("ltx-2_ltx-2-19b_bf16", d / "diffusion_models" / "ltx2.safetensors")
    est = formula.judge(workflow.estimate_workflow(ltx2_subgraph(), d), 80 << 30)
    # stage 2: 2 x (512 // 32) x 32 = 1024, 2 x (288 // 32) x 32 = 576; the old reader: 1536 x 1024, 97 frames
    assert (est["width"], est["height"], est["frames"]) == (1024, 576, 89)
    assert est["workflow"]["size_from_graph"] == [512, 288, 89, 1]


def test_a_subgraph_input_linked_outside_is_followed_outside():
    top = [{"id": 40, "type": "PrimitiveInt", "inputs": [], "widgets_values": [1280, "fixed"]}]
    wf = ltx2_subgraph(outer_links=[_w("width", 300)], top=top)
    wf["links"] = [[300, 40, 0, 5, 1, "INT"]]  # the top graph's [id, src, src_slot, dst, dst_slot, type]
    assert workflow.read(wf, None)["size"][:2] == (640, 288)  # 1280 x 0.5; height still the widget's 576 x 0.5


def test_a_newer_frontends_instance_values_follow_its_inputs_order():
    """Frontend 1.58.1 drops proxyWidgets on load and saves the instance's widgets_values one per input, in the inputs'
    order (SubgraphNode.serializeFromStoreState: the promoted widget's value, else undefined, null in JSON)."""
    wf = ltx2_subgraph()
    inst = wf["nodes"][0]
    del inst["properties"]["proxyWidgets"]
    inst["inputs"] = [_w(n, None) for n in ("width", "height", "value", "text", "unet_name")]
    inst["widgets_values"] = [960, 544, 65, "a prompt", "ltx2.safetensors"]
    info = workflow.read(wf, None)
    assert info["size"] == (480, 272, 65, 1)  # 960 x 0.5, 544 x 0.5; 65 frames; the inner saved 1024/576/89 not read
    assert [m[0] for m in info["missing"]] == ["ltx2.safetensors"]


def test_a_proxied_inner_widget_keeps_its_saved_value():
    """Comfy-Org's newer subgraph templates (Wan 2.2 i2v) promote the inner node's own widget (["128", "width"]):
    the instance's widgets_values is empty, and the inner node's saved value is the one the frontend runs."""
    inner = [{"id": 12, "type": "WanImageToVideo", "inputs": [_w("width", 1), _w("height", 2), _w("length", 3)],
              "widgets_values": [720, 480, 49, 1]}]
    sub = {"id": SG, "inputNode": {"id": -10}, "inputs": [{"name": "width"}, {"name": "height"}, {"name": "length"}],
           "nodes": inner, "links": [_lk(1, -10, 0, 12, 0), _lk(2, -10, 1, 12, 1), _lk(3, -10, 2, 12, 2)]}
    inst = {"id": 9, "type": SG, "inputs": [], "widgets_values": [],
            "properties": {"proxyWidgets": [["12", "width"], ["12", "height"], ["12", "length"]]}}
    info = workflow.read({"nodes": [inst], "links": [], "definitions": {"subgraphs": [sub]}}, None)
    assert info["size"] == (720, 480, 49, 1)
    assert not any("linked" in n for n in info["notes"])


def _top(*nodes, links=()):
    return {"nodes": list(nodes), "links": [list(x) for x in links], "version": 0.4}


def test_the_frontends_primitive_node_through_a_reroute_and_a_linked_cfg():
    wf = _top({"id": 1, "type": "PrimitiveNode", "outputs": [{"name": "INT", "links": [1]}], "widgets_values": [1152, "fixed"]},
              {"id": 2, "type": "Reroute", "inputs": [{"name": "", "type": "*", "link": 1}], "outputs": [{"links": [2]}]},
              {"id": 3, "type": "PrimitiveNode", "widgets_values": [896, "fixed"]},
              {"id": 4, "type": "EmptyLatentImage", "inputs": [_w("width", 2), _w("height", 3)], "widgets_values": [512, 512, 1]},
              {"id": 5, "type": "PrimitiveFloat", "inputs": [], "widgets_values": [4.5]},
              {"id": 6, "type": "KSampler", "inputs": [_w("cfg", 4, "FLOAT")],
               "widgets_values": [7, "fixed", 20, 1.0, "euler", "normal", 1.0]},
              links=[(1, 1, 0, 2, 0, "INT"), (2, 2, 0, 4, 0, "INT"), (3, 3, 0, 4, 1, "INT"), (4, 5, 0, 6, 0, "FLOAT")])
    info = workflow.read(wf, None)
    assert info["size"] == (1152, 896, 1, 1)
    assert info["cfg"] is True  # 4.5 from the PrimitiveFloat: CFG on; the saved 1.0 said off


def test_a_source_not_followed_keeps_the_saved_value_and_is_named():
    wf = _top({"id": 7, "type": "SomeCustomMath", "inputs": [], "widgets_values": ["a*2"]},
              {"id": 8, "type": "LoadImage", "widgets_values": ["photo.png", "image"]},
              {"id": 9, "type": "GetImageSize", "inputs": [{"name": "image", "type": "IMAGE", "link": 2}]},
              {"id": 10, "type": "PrimitiveInt", "mode": 2, "widgets_values": [3]},
              {"id": 11, "type": "EmptyLatentImage", "inputs": [_w("width", 1), _w("height", 3), _w("batch_size", 4)],
               "widgets_values": [832, 1216, 1]},
              links=[(1, 7, 0, 11, 0), (2, 8, 0, 9, 0, "IMAGE"), (3, 9, 1, 11, 1), (4, 10, 0, 11, 2)])
    info = workflow.read(wf, None)
    assert info["size"] == (832, 1216, 1, 1)
    notes = "\n".join(info["notes"])
    assert "EmptyLatentImage.width is linked from SomeCustomMath (node 7), not a constant, which the estimate does not " \
           "follow: its saved value 832 is used" in notes
    assert "EmptyLatentImage.height is linked from LoadImage (node 8): an image whose size" in notes
    assert "EmptyLatentImage.batch_size is linked from PrimitiveInt (node 10), muted or bypassed" in notes


def test_api_format_follows_a_link_to_a_constant_and_names_the_others():
    prompt = {"1": {"class_type": "PrimitiveInt", "inputs": {"value": 704}},
              "2": {"class_type": "EmptyImage", "inputs": {"width": 1408, "height": ["1", 0], "batch_size": 1, "color": 0}},
              "3": {"class_type": "ImageScale", "inputs": {"image": ["2", 0], "upscale_method": "area", "width": 0, "height": 353,
                                                           "crop": "disabled"}},
              "4": {"class_type": "GetImageSize", "inputs": {"image": ["3", 0]}},
              "5": {"class_type": "EmptyHunyuanLatentVideo", "inputs": {"width": ["4", 0], "height": ["4", 1], "length": ["6", 0],
                                                                        "batch_size": 1}},
              "6": {"class_type": "CustomFrameCount", "inputs": {}}}
    info = workflow.read(prompt, None)
    # ImageScale width 0: max(1, round(1408 x 353 / 704)) = round(706.0) = 706; the length's source is not read
    assert info["size"] == (706, 353, 1, 1)
    assert any(n == "EmptyHunyuanLatentVideo.length is linked from CustomFrameCount (node 6), not a constant, which the "
               "estimate does not follow: not set" for n in info["notes"])


def test_the_footprint_estimate_routes_whole_workflow_reads_the_same(monkeypatch, tmp_path):
    from support.fit_stubs import graph_route_on

    d = tmp_path / "models"
    layouts.write_sparse("ltx-2_ltx-2-19b_bf16", d / "diffusion_models" / "ltx2.safetensors")
    routes = graph_route_on(monkeypatch, Path(__file__).parent / "stubs", d)
    out = routes.estimate_graph({"workflow": ltx2_subgraph(), "vram_gb": 80})
    assert (out["width"], out["height"], out["frames"]) == (1024, 576, 89) and out["size_from"] == "graph"
