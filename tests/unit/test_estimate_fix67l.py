"""fix67l: review rev67h's findings on the fix67d merge (issue 15), each checked against ComfyUI 0.8.0's source.

F1, F4: a custom NNLatentUpscale behind a core node that keeps its input's width and height (RepeatLatentBatch
nodes.py:1238, LatentFromBatch :1206, RebatchLatents, LatentBatch) was not named: the walk stopped at the core node.
F7: LatentCompositeMasked (comfy_extras/nodes_mask.py:48-71, a copy of destination) was named as a node not sized.
F13: LatentUpscale with width and height both set makes that size whatever its input's: an unknown node before it was
named though it cannot move the size."""
from gpu_garden.memory.estimate import layouts, workflow

KS = {"seed": 1, "steps": 20, "cfg": 7.0, "sampler_name": "euler", "scheduler": "normal", "denoise": 0.5,
      "model": ["4", 0], "positive": ["6", 0], "negative": ["6", 0]}


def _graph(sdxl, between):
    """SDXL 1024 px sampled (3), NNLatentUpscale x2 (10), then the nodes `between` ({id: (type, inputs)}, the last
    one's id "20"), a second sampler (11) on node 20, decoded (rev67h wf_nn_*_api.json)."""
    g = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": sdxl}},
         "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
         "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
         "3": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["5", 0], denoise=1.0)},
         "10": {"class_type": "NNLatentUpscale", "inputs": {"version": "SDXL", "upscale": 2.0, "latent": ["3", 0]}},
         "11": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["20", 0])},
         "8": {"class_type": "VAEDecode", "inputs": {"samples": ["11", 0], "vae": ["4", 2]}},
         "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}
    g.update({k: {"class_type": t, "inputs": i} for k, (t, i) in between.items()})
    return g


def _uncertain(tmp_path, between):
    sdxl = layouts.write_sparse("sdxl_sd_xl_base_1.0", tmp_path / "checkpoints" / "sdxl.safetensors")
    est = workflow.estimate_workflow(_graph(sdxl.name, between), tmp_path)
    return [u["node"] for u in est["workflow"]["size_uncertain"]]


NN = ["NNLatentUpscale (node 10)"]


def test_unknown_node_behind_a_core_node_that_keeps_the_size(tmp_path):
    """rev67h R8: RepeatLatentBatch, LatentFromBatch, RebatchLatents, LatentBatch between NNLatentUpscale and the
    second sampler. Old code: [] (the walk stopped at the core node)."""
    for t, inputs in (("RepeatLatentBatch", {"samples": ["10", 0], "amount": 2}),
                      ("LatentFromBatch", {"samples": ["10", 0], "batch_index": 0, "length": 1}),
                      ("RebatchLatents", {"latents": ["10", 0], "batch_size": 1}),
                      ("LatentBatch", {"samples1": ["10", 0], "samples2": ["3", 0]})):
        assert _uncertain(tmp_path, {"20": (t, inputs)}) == NN, t


def test_latent_composite_masked_is_its_destination(tmp_path):
    """rev67h R7: LatentCompositeMasked with a core destination (the empty latent) and the NN latent pasted in as its
    source: its latent is the destination's size, nothing is named. Old code: LatentCompositeMasked (node 20) named.
    With the NN latent as destination: NNLatentUpscale named (old code: LatentCompositeMasked)."""
    mask = {"x": 0, "y": 0, "resize_source": False}
    assert _uncertain(tmp_path, {"20": ("LatentCompositeMasked", dict(mask, destination=["5", 0], source=["10", 0]))}) == []
    assert _uncertain(tmp_path, {"20": ("LatentCompositeMasked", dict(mask, destination=["10", 0], source=["5", 0]))}) == NN


def test_latent_upscale_to_a_set_size_ends_the_walk(tmp_path):
    """rev67h R13: NNLatentUpscale -> LatentUpscale 1536x1536: the sampler's latent is 1536 px whatever NN made
    (nodes.py:1279-1295): nothing named. Old code: NNLatentUpscale named. Width 0 (the input's aspect) or both 0 (the
    input kept): still named."""
    up = {"upscale_method": "nearest-exact", "crop": "disabled", "samples": ["10", 0]}
    assert _uncertain(tmp_path, {"20": ("LatentUpscale", dict(up, width=1536, height=1536))}) == []
    assert _uncertain(tmp_path, {"20": ("LatentUpscale", dict(up, width=0, height=1536))}) == NN
    assert _uncertain(tmp_path, {"20": ("LatentUpscale", dict(up, width=0, height=0))}) == NN
