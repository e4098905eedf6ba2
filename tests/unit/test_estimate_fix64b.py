"""fix64b (rev64 #3): each sampler's ControlNets are judged at that sampler's own latent size. A hires fix (ups64 sizes
its second pass: VAEDecode -> ImageScaleBy x2 -> VAEEncode -> KSampler) whose ControlNet is on the 512 x 512 base pass
only is estimated at the second pass's 1024 x 1024; before fix64b the sample phase added that ControlNet's residuals at
1024 x 1024 (4096 tokens), though it only runs with the base pass (1024 tokens) and the second pass holds none. Hand-made
graphs (rev64's reproduction, /tmp/rev64/test_hires_cn.py, made a real test); the figures are worked out by hand below.
The hires tests failed on the code before fix64b (the residuals added were 125,829,120)."""
from gpu_garden.memory.estimate import workflow

from test_estimate_fix64 import A, _added, _before_after, _o, _two_samplers_api, _two_samplers_ui
from test_estimate_wf66 import CNET_BYTES, CNET_RESIDUALS

# ControlNet A's residuals at 512 x 512: 512 / 8 / 2 = 32; 32 x 32 = 1024 tokens: 5 x 3072 x 1024 x 1 x 2 = 31,457,280
A_RESIDUALS_512 = 31_457_280
# ControlNet B's (two blocks) at 1024 x 1024: 2 x 3072 x 4096 x 1 x 2 = 50,331,648
B_RESIDUALS_1024 = 50_331_648


def _ks(pos, latent, denoise=0.5):
    return {"class_type": "KSampler", "inputs": {"model": ["1", 0], "positive": [pos, 0], "negative": [pos, 1],
            "latent_image": latent, "seed": 1, "steps": 20, "cfg": 1.0, "sampler_name": "euler", "scheduler": "simple",
            "denoise": denoise}}


def _hires(second_cn=None):
    """UNETLoader; EmptySD3LatentImage 512 x 512 -> KSampler 3 with ControlNet A (apply 12); decoded, scaled x2,
    encoded -> KSampler 4 (text conditioning only, or ControlNet `second_cn` through apply 13) -> decoded, saved."""
    wf = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "qwen_dm.safetensors", "weight_dtype": "default"}},
          "2": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}},
          "10": {"class_type": "ControlNetLoader", "inputs": {"control_net_name": "cn_big.safetensors"}},
          "12": {"class_type": "ControlNetApplyAdvanced", "inputs": {"control_net": ["10", 0], "strength": 1.0,
                                                                      "start_percent": 0.0, "end_percent": 1.0}},
          "3": _ks("12", ["2", 0], 1.0), "5": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0]}},
          "20": {"class_type": "ImageScaleBy", "inputs": {"image": ["5", 0], "upscale_method": "lanczos", "scale_by": 2.0}},
          "21": {"class_type": "VAEEncode", "inputs": {"pixels": ["20", 0]}},
          "30": {"class_type": "CLIPTextEncode", "inputs": {"text": "x"}},
          "4": _ks("30", ["21", 0]), "6": {"class_type": "VAEDecode", "inputs": {"samples": ["4", 0]}},
          "7": {"class_type": "SaveImage", "inputs": {"images": ["6", 0], "filename_prefix": "x"}}}
    if second_cn:
        wf["11"] = {"class_type": "ControlNetLoader", "inputs": {"control_net_name": second_cn}}
        wf["13"] = {"class_type": "ControlNetApplyAdvanced", "inputs": {"control_net": ["11", 0], "strength": 1.0,
                                                                         "start_percent": 0.0, "end_percent": 1.0}}
        wf["4"]["inputs"].update(positive=["13", 0], negative=["13", 1])
    return wf


def test_base_pass_controlnet_is_judged_at_the_base_pass_size(tmp_path):
    """rev64's reproduction: estimated at 1024 x 1024 (ups64). fix64b counted A's weights and its residuals at 512 x 512
    on the estimated size's activations; since act65 the base pass's run is judged whole at its size (act(512) + A's
    set: 226,247,884 with the margin) and holds less than the second pass's act(1024) (307,455,590): nothing is added
    (test_estimate_act65 checks the figures against one-sampler estimates)."""
    before, after = _before_after(tmp_path, _hires())
    assert (after["width"], after["height"]) == (1024, 1024)
    assert _added(before, after) == (0, 0)  # fix64b: (113,670,144, 31,457,280); before it: (113,670,144, 125,829,120)
    assert _added(before, after, "sample_naive_attention") == (0, 0)
    assert "side_models" not in after["breakdown"]["sample"]
    assert any(x.startswith("2 samplers, run one at a time, each counted at its own latent with its own ControlNets "
                            "(KSampler (node 3) at 512x512 with cn_big.safetensors (ControlNetLoader); ")
               for x in after["assumptions"])


def test_each_set_at_its_own_size_the_largest_counted(tmp_path):
    """B on the 1024 x 1024 second pass: fix64b compared the sets alone (B's 90,609,254 against A's at 512 x 512,
    146,700,288) and counted A's; since act65 each run holds its own pass's activations too, and the second pass's
    (act(1024) + B) is the larger: B's weights and its residuals at 1024 x 1024."""
    before, after = _before_after(tmp_path, _hires("cn_small.safetensors"))
    assert _added(before, after) == (37_761_024, B_RESIDUALS_1024)


def test_the_second_pass_set_wins_when_larger_at_its_size(tmp_path):
    """A on both passes' loaders swapped: the base pass runs B (2 blocks, at 512 x 512), the second A (at 1024 x 1024):
    A's set at the second pass's size is the larger, counted whole."""
    wf = _hires("cn_big.safetensors")
    wf["10"]["inputs"]["control_net_name"] = "cn_small.safetensors"
    before, after = _before_after(tmp_path, wf)
    assert _added(before, after) == (CNET_BYTES, CNET_RESIDUALS)


def test_typed_size_keeps_every_set_at_the_estimated_size(tmp_path):
    """--width/--height typed: the estimate is at that size, whatever the graph's passes are; no set is made smaller."""
    _before_after(tmp_path, _hires())
    typed = workflow.estimate_workflow(_hires(), tmp_path / "models", width=1024, height=1024)
    b = typed["breakdown"]["sample"]["side_models"][A]
    assert b == {"weights": CNET_BYTES, "activations": CNET_RESIDUALS}


def test_fix64s_two_samplers_at_one_size_keep_their_figures(tmp_path):
    """Both of fix64's samplers at 1024 x 1024 (the second on the first's latent): nothing changes."""
    before, after = _before_after(tmp_path, _two_samplers_api())
    assert _added(before, after) == (CNET_BYTES, CNET_RESIDUALS)
    assert not any("smaller than the estimated" in x for x in after["assumptions"])


def test_two_branches_ui_each_set_at_its_own_latent(tmp_path):
    """UI format, two branches: KSampler 3 (ControlNet A) on an EmptySD3LatentImage of 512 x 512, KSampler 4
    (ControlNet B) on another of 1024 x 1024 (the larger estimated). fix64b: A at its 512 x 512 (146,700,288 with its
    margin) beat B at 1024 x 1024 (90,609,254) on the estimated size's activations; since act65 each branch's run holds
    its own latent's activations, and B's branch at 1024 x 1024 is the larger: B's weights and residuals at 4096 tokens."""
    wf = _two_samplers_ui()
    next(n for n in wf["nodes"] if n["id"] == 2)["widgets_values"] = [512, 512, 1]
    wf["nodes"].append({"id": 8, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1],
                        "outputs": [_o("LATENT", 20)]})
    wf["links"] = [x for x in wf["links"] if x[0] != 8] + [[20, 8, 0, 4, 3, "LATENT"]]
    for n in wf["nodes"]:
        if n["id"] == 4:
            n["inputs"][3]["link"] = 20
        if n["id"] == 3:
            n["outputs"] = [_o("LATENT", 9)]
    before, after = _before_after(tmp_path, wf)
    assert (after["width"], after["height"]) == (1024, 1024)
    assert _added(before, after) == (37_761_024, B_RESIDUALS_1024)
    assert any(x.startswith("2 samplers, run one at a time") and x.endswith("the sample phase is KSampler (node 4)'s run, "
                            "the diffusion model's activations at 1024x1024 and its ControlNets' weights and residuals "
                            "(cn_small.safetensors (ControlNetLoader))") for x in after["assumptions"])
