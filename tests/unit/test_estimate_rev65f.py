"""Review rev65f (issue 15) of the lead's 8269b3d4 (est65b reverted, the MODEL walk widened again). #1: with only a size
typed, an image made from a decode through a scale kept its own batch while the decode took the estimate's. #2: the MODEL
walk went on through an IPAdapter's image input into a decode of a run on a patched model (it stops at nodes that make
no MODEL now). #3: ComfyUI's Switch with a literal switch value runs only the chosen input (lazy inputs,
execution.py:486-495). #4: a negative or zero side at the upscale step gave a traceback or a 0-byte step (a clear error
now). The reviewer's reproductions, /tmp/rev65f/src/tests/unit/test_rev65f_*.py."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import workflow
from test_estimate_est65 import PATCH_BYTES, _two_branches, _with_patch
from test_estimate_rev65e import _g
from test_estimate_ups64 import IMAGE, _api, _models


# -- #1: the batch of an image made from a decode --------------------------------------------------------

def _show(est):
    pu = est["breakdown"]["pixel_upscale"]
    print({k: pu[k] for k in pu if k in ("activations", "image", "how", "weights")})
    print([a for a in est["assumptions"] if "upscale" in a.lower() or "decode" in a.lower() or "typed" in a])


def _chain(a, b):
    wf = _g(a, b)
    wf["20"] = {"class_type": "ImageScaleBy", "inputs": {"image": ["4", 0], "upscale_method": "nearest-exact",
                                                         "scale_by": 1.0}}
    wf["6"]["inputs"]["image"] = ["20", 0]
    return wf


def test_typed_width_direct_vs_chain(tmp_path):
    m = _models(tmp_path)
    d = workflow.estimate_workflow(_g(1, 4), m, width=768, height=768)
    c = workflow.estimate_workflow(_chain(1, 4), m, width=768, height=768)
    _show(d); _show(c)
    print("sample", d["breakdown"]["sample"].get("sampler"), d["size"] if "size" in d else None)
    assert d["breakdown"]["pixel_upscale"]["activations"] == c["breakdown"]["pixel_upscale"]["activations"]


def test_typed_width_two_step_chain_batch(tmp_path):
    """512 x1 branch beside a 1024 x4 one, decode -> x4 -> x4 again; typed 768: the estimate runs every sampler at
    768 x4 and takes the first step's image at 768 x4 (the decode), but the second step's at 3072 x1."""
    wf = _g(1, 4)
    wf["16"] = {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": ["6", 0]}}
    wf["7"]["inputs"]["images"] = ["16", 0]
    est = workflow.estimate_workflow(wf, _models(tmp_path), width=768, height=768)
    _show(est)
    assert est["breakdown"]["pixel_upscale"]["activations"] == 4 * 3072 * 3072 * IMAGE + 8_204 * 512 * 512


# -- #2: the MODEL walk stops at nodes that make no MODEL ------------------------------------------------
# The 1024 sampler's MODEL passes through IPAdapterAdvanced (model: the plain UNETLoader), whose IMAGE input is a
# decode of a custom sampler ("KSampler (Efficient)", efficiency-nodes) that runs on the patched model. ComfyUI loads the
# patch with the model it is set on (comfy/model_management.py:633-636); the 1024 run's model carries none.

def test_patch_reached_through_an_image_input_is_not_the_runs(tmp_path):
    wf = _two_branches("small")
    wf["40"] = {"class_type": "KSampler (Efficient)", "inputs": {"model": ["21", 0], "latent_image": ["2", 0],
                                                                 "positive": ["9", 0], "negative": ["9", 0]}}
    wf["41"] = {"class_type": "VAEDecode", "inputs": {"samples": ["40", 3]}}
    wf["42"] = {"class_type": "IPAdapterAdvanced", "inputs": {"model": ["1", 0], "image": ["41", 0], "weight": 1.0}}
    wf["4"]["inputs"]["model"] = ["42", 0]
    added, after = _with_patch(tmp_path, wf)
    print(added, after["breakdown"]["sample"]["sampler"])
    assert after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    assert added == (0, 0)


# -- #3: a Switch with a literal value -------------------------------------------------------------------
# ComfySwitchNode is lazy (comfy_extras/nodes_logic.py:22-35): with switch False only on_false is evaluated, so the
# 1024 run's model is the plain one and it does not carry the patch on on_true.

def test_switch_false_does_not_carry_the_on_true_patch(tmp_path):
    wf = _two_branches("small")
    wf["30"] = {"class_type": "ComfySwitchNode", "inputs": {"switch": False, "on_true": ["21", 0],
                                                            "on_false": ["1", 0]}}
    wf["4"]["inputs"]["model"] = ["30", 0]
    added, after = _with_patch(tmp_path, wf)
    print(added, after["breakdown"]["sample"]["sampler"])
    assert after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    assert added == (0, 0)


# -- #4: a side under 1 at the upscale step --------------------------------------------------------------

def _empty(w, h, b=1):
    wf = _api()
    wf["20"] = {"class_type": "EmptyImage", "inputs": {"width": w, "height": h, "batch_size": b, "color": 0}}
    wf["6"]["inputs"]["image"] = ["20", 0]
    return wf


@pytest.mark.parametrize("w,h,b", [(0, 512, 1), (-512, 512, 1), (512, 512, 0), (512, 512, -3), (10**7, 512, 1), (512, 512, 10**9)])
def test_odd_empty_image(tmp_path, w, h, b):
    try:
        est = workflow.estimate_workflow(_empty(w, h, b), _models(tmp_path))
    except UserError as e:
        print("UserError", e); return
    pu = est["breakdown"]["pixel_upscale"]
    print(w, h, b, pu["activations"], [a for a in est["assumptions"] if "pixel upscale" in a])
    assert pu["activations"] > 0


@pytest.mark.parametrize("by", [0, -2, 1e6, float("nan")])
def test_odd_chain(tmp_path, by):
    wf = _api()
    wf["20"] = {"class_type": "ImageScaleBy", "inputs": {"image": ["4", 0], "upscale_method": "nearest-exact", "scale_by": by}}
    wf["6"]["inputs"]["image"] = ["20", 0]
    for kw in ({}, {"width": 768, "height": 768}):
        try:
            est = workflow.estimate_workflow(wf, _models(tmp_path), **kw)
        except UserError as e:
            print("UserError", e); continue
        pu = est["breakdown"]["pixel_upscale"]
        print(by, kw, pu["activations"], [a for a in est["assumptions"] if "pixel upscale" in a])
        assert pu["activations"] > 0
