"""fix66a: the estimate findings of audit aud66a (issue 15), each checked against ComfyUI 0.8.0's source.

F3: LatentUpscaleBy (nodes.py:1298-1314) makes its input latent's sides times scale_by, rounded in latent pixels
(round(samples.shape[-1] * scale_by), Python's round: half to even), so the image is a multiple of 8 px; it was
estimated at the base size."""
from gpu_garden.memory.estimate import workflow


def _hires_api(w, h, batch, by):
    """txt2img at w x h, LatentUpscaleBy, a second KSampler, decode, save (API format)."""
    ks = {"seed": 1, "steps": 20, "cfg": 7.0, "sampler_name": "euler", "scheduler": "normal", "denoise": 1.0,
          "model": ["4", 0], "positive": ["6", 0], "negative": ["6", 0]}
    return {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "x.safetensors"}},
            "5": {"class_type": "EmptyLatentImage", "inputs": {"width": w, "height": h, "batch_size": batch}},
            "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
            "3": {"class_type": "KSampler", "inputs": dict(ks, latent_image=["5", 0])},
            "10": {"class_type": "LatentUpscaleBy", "inputs": {"upscale_method": "nearest-exact", "scale_by": by,
                                                               "samples": ["3", 0]}},
            "11": {"class_type": "KSampler", "inputs": dict(ks, latent_image=["10", 0], denoise=0.5)},
            "8": {"class_type": "VAEDecode", "inputs": {"samples": ["11", 0], "vae": ["4", 2]}},
            "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}


def _hires_ui(w, h, batch, by):
    """The same graph in UI format (widgets_values, links [id, from, slot, to, slot, type])."""
    ks = [1, "fixed", 20, 7.0, "euler", "normal", 1.0]
    nodes = [{"id": 4, "type": "CheckpointLoaderSimple", "widgets_values": ["x.safetensors"],
              "outputs": [{"name": "MODEL", "links": [1, 2]}, {"name": "CLIP", "links": []}, {"name": "VAE", "links": [7]}]},
             {"id": 5, "type": "EmptyLatentImage", "widgets_values": [w, h, batch], "outputs": [{"name": "LATENT", "links": [3]}]},
             {"id": 3, "type": "KSampler", "widgets_values": ks,
              "inputs": [{"name": "model", "link": 1}, {"name": "latent_image", "link": 3}],
              "outputs": [{"name": "LATENT", "links": [4]}]},
             {"id": 10, "type": "LatentUpscaleBy", "widgets_values": ["nearest-exact", by],
              "inputs": [{"name": "samples", "link": 4}], "outputs": [{"name": "LATENT", "links": [5]}]},
             {"id": 11, "type": "KSampler", "widgets_values": ks[:6] + [0.5],
              "inputs": [{"name": "model", "link": 2}, {"name": "latent_image", "link": 5}],
              "outputs": [{"name": "LATENT", "links": [6]}]},
             {"id": 8, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 6}, {"name": "vae", "link": 7}],
              "outputs": [{"name": "IMAGE", "links": [8]}]},
             {"id": 9, "type": "SaveImage", "widgets_values": ["x"], "inputs": [{"name": "images", "link": 8}]}]
    links = [[1, 4, 0, 3, 0, "MODEL"], [2, 4, 0, 11, 0, "MODEL"], [3, 5, 0, 3, 3, "LATENT"], [4, 3, 0, 10, 0, "LATENT"],
             [5, 10, 0, 11, 3, "LATENT"], [6, 11, 0, 8, 0, "LATENT"], [7, 4, 2, 8, 1, "VAE"], [8, 8, 0, 9, 0, "IMAGE"]]
    return {"nodes": nodes, "links": links, "version": 0.4}


def test_latent_upscale_by_scales_the_input_latent_api():
    """1048 px: a 131-pixel latent; 131 x 1.5 = 196.5, which Python's round takes to 196 (half to even), x 8 = 1568 px
    (rounding the pixels, 1572, or half up, 1576, would differ). Batch 2 is the input's. Old code: 1048 x 1048."""
    info = workflow.read(_hires_api(1048, 1048, 2, 1.5), None)
    assert info["size"] == (1568, 1568, 1, 2)
    assert any(n.startswith("LatentUpscaleBy (scale_by 1.5 of 1048x1048) resizes the latent to 1568x1568")
               for n in info["notes"]), info["notes"]
    assert not info["from_input"]


def test_latent_upscale_by_scales_the_input_latent_ui():
    """1000 x 768 px at 1.25: latents 125 x 96 -> 156.25 -> 156 and 120 -> 1248 x 960 px (pixels would be 1250)."""
    info = workflow.read(_hires_ui(1000, 768, 1, 1.25), None)
    assert info["size"] == (1248, 960, 1, 1)


def test_latent_upscale_by_below_one_leaves_the_base_size_the_largest():
    """scale_by 0.5 makes a smaller second pass: the base 1024 x 1024 is the largest, and is estimated."""
    info = workflow.read(_hires_api(1024, 1024, 1, 0.5), None)
    assert info["size"] == (1024, 1024, 1, 1)
    assert any("resizes the latent to 512x512" in n for n in info["notes"]), info["notes"]


def test_latent_upscale_by_out_of_range_is_named_not_sized():
    """ComfyUI refuses scale_by 9 (max 8.0, nodes.py:1303): not sized, named as before."""
    info = workflow.read(_hires_api(1024, 1024, 1, 9.0), None)
    assert info["size"] == (1024, 1024, 1, 1)
    assert [t for t, _ in info["from_input"]] == ["LatentUpscaleBy"]


def test_latent_upscale_by_follows_its_own_input_latent():
    """Two branches: a 768 px latent sampled and saved, and a 512 px one upscaled by 2. The upscale is its input's
    512 -> 1024 px (64 x 2 = 128 latent px), not the graph's largest latent (768 -> 1152)."""
    wf = _hires_api(512, 512, 1, 2.0)
    ks = dict(wf["3"]["inputs"], latent_image=["20", 0])
    wf.update({"20": {"class_type": "EmptyLatentImage", "inputs": {"width": 768, "height": 768, "batch_size": 1}},
               "21": {"class_type": "KSampler", "inputs": ks},
               "22": {"class_type": "VAEDecode", "inputs": {"samples": ["21", 0], "vae": ["4", 2]}},
               "23": {"class_type": "SaveImage", "inputs": {"images": ["22", 0], "filename_prefix": "y"}}})
    info = workflow.read(wf, None)
    assert info["size"] == (1024, 1024, 1, 1)
    assert any(n.startswith("LatentUpscaleBy (scale_by 2 of 512x512)") for n in info["notes"]), info["notes"]
