"""Review rev65e of est65b (issue 15). #2: a hand-edited EmptyLatentImage side of 0 with a typed size divided by zero
in the upscale step's scaling (now the typed size, the decode's image). #3: a typed --batch or size is every sampler's, so
it is every decode's image too: an upscaled decode beside another branch took typed / the graph's estimated batch (1 image
where its sampler ran 4) and a typed 768 gave a 384 image where the base pass sampled at 768 (est65b's rule #1,
reverted). Outside est65b: a side of 10**400 overflowed a float in the upscale step (now a clear error)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import workflow
from test_estimate_ups64 import IMAGE, _api, _models


# -- #2: a zero side with a typed size -------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{"w": 0}, {"h": 0}])
def test_zero_side_latent_with_a_typed_size_never_raises_a_traceback(tmp_path, kw):
    try:
        est = workflow.estimate_workflow(_api(**kw), _models(tmp_path), width=1024, height=1024)
    except UserError:
        return  # a clear error is fine
    assert est["breakdown"]["pixel_upscale"]["activations"] > 0

# -- #3: a typed batch or size is the decode's -----------------------------------------------------------

def _g(a, b):
    ks = lambda lat: {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": [lat, 0], "cfg": 7.0,  # noqa
                                                           "denoise": 1.0}}
    return {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
            "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": a}},
            "3": ks("2"), "4": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["1", 2]}},
            "5": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "4x-UltraSharp.safetensors"}},
            "6": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": ["4", 0]}},
            "7": {"class_type": "SaveImage", "inputs": {"images": ["6", 0]}},
            "12": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": b}},
            "13": ks("12"), "14": {"class_type": "VAEDecode", "inputs": {"samples": ["13", 0], "vae": ["1", 2]}},
            "15": {"class_type": "SaveImage", "inputs": {"images": ["14", 0]}}}


@pytest.mark.parametrize("typed", [4, 8])
def test_typed_batch_is_the_upscaled_decodes_batch(tmp_path, typed):
    est = workflow.estimate_workflow(_g(1, 4), _models(tmp_path), batch=typed)
    assert est["breakdown"]["pixel_upscale"]["activations"] == typed * 512 * 512 * IMAGE + 8_204 * 512 * 512


def test_typed_size_independent_branches_the_upscaled_decode_is_the_typed_size(tmp_path):
    """The same two branches (A 512 batch 1 -> x4, B 1024), --width/--height 768: every sampler is at the typed size
    (docs/estimate.md:350, workflow.py:477 own_sizes off), so A's decode is 768 x 768 and its x4 step takes one 512
    tile; est65b scales A's 512 by 768/1024 (no factor links the two EmptyLatentImage nodes in ComfyUI's graph) and
    counts a 384 x 384 image and tile: 948 MB less. db25306d^1: 768."""
    est = workflow.estimate_workflow(_g(1, 1), _models(tmp_path), width=768, height=768)
    assert est["breakdown"]["pixel_upscale"]["activations"] == 768 * 768 * IMAGE + 8_204 * 512 * 512

# -- a huge side is a clear error ------------------------------------------------------------------------

@pytest.mark.parametrize("w", [10**400, 1e308])
def test_huge_latent_side_is_a_clear_error(tmp_path, w):
    with pytest.raises(UserError):
        workflow.estimate_workflow(_api(w=w), _models(tmp_path))
