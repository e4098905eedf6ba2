"""fix64 (rev63 #9): ControlNets on samplers run one after the other are not summed. ComfyUI 0.8.0 loads for each
sampler the ControlNets its own conditioning carries (comfy/sampler_helpers.py:69-91, 125-138), so the sample phase
counts one sampler's set, the largest (memory/estimate/control_feeds.py, side_models.one_sampler). The graphs are
hand-made: a base KSampler with ControlNet A (five residual blocks), then a second KSampler on its latent with
ControlNet B (two blocks) whose image is decoded from the base pass. The two-sampler tests failed on the code before
fix64 (it summed A and B); the chained one passes on both (one sampler: every ControlNet, as before)."""
from gpu_garden.memory.estimate import workflow
from gpu_garden.memory.estimate.spec import FRAGMENTATION

from test_estimate_wf64 import _top
from test_estimate_wf66 import BF16, CNET, CNET_BYTES, CNET_RESIDUALS, _file, _qwen

# ControlNet B: two controlnet_blocks of width 3072, bf16: 2 x (3072 x 3072 + 3072) x 2 = 37,761,024 bytes; its
# residuals at 1024 x 1024 (4096 tokens), cfg 1: 2 x 3072 x 4096 x 1 x 2 = 50,331,648
SMALL = {**{f"controlnet_blocks.{i}.weight": (BF16, (3072, 3072)) for i in range(2)},
         **{f"controlnet_blocks.{i}.bias": (BF16, (3072,)) for i in range(2)}}
SMALL_BYTES, SMALL_RESIDUALS = 37_761_024, 50_331_648
A, B = "cn_big.safetensors (ControlNetLoader)", "cn_small.safetensors (ControlNetLoader)"


def _i(name, link, typ):
    return {"name": name, "type": typ, "link": link}


def _o(typ, *links):
    return {"name": typ, "type": typ, "links": list(links)}


def _apply(nid, cn_link, pos, neg, out_pos, out_neg, image=None):
    return {"id": nid, "type": "ControlNetApplyAdvanced",
            "inputs": [_i("positive", pos, "CONDITIONING"), _i("negative", neg, "CONDITIONING"),
                       _i("control_net", cn_link, "CONTROL_NET"), _i("image", image, "IMAGE")],
            "outputs": [_o("CONDITIONING", *out_pos), _o("CONDITIONING", *out_neg)],
            "widgets_values": [1.0, 0.0, 1.0]}


def _ksampler(nid, model, pos, neg, latent, out):
    return {"id": nid, "type": "KSampler", "inputs": [_i("model", model, "MODEL"), _i("positive", pos, "CONDITIONING"),
                                                      _i("negative", neg, "CONDITIONING"), _i("latent_image", latent, "LATENT")],
            "outputs": [_o("LATENT", *out)], "widgets_values": [1, "fixed", 20, 1.0, "euler", "simple", 1.0]}


def _two_samplers_ui():
    """UNETLoader; KSampler 3 (ControlNet A via apply 12) on the EmptySD3LatentImage; its latent decoded (VAEDecode 5)
    into apply 13's image; KSampler 4 (ControlNet B via apply 13) on KSampler 3's latent; decoded and saved."""
    return _top({"id": 1, "type": "UNETLoader", "widgets_values": ["qwen_dm.safetensors", "default"], "outputs": [_o("MODEL", 13, 14)]},
                {"id": 2, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1], "outputs": [_o("LATENT", 7)]},
                {"id": 10, "type": "ControlNetLoader", "widgets_values": ["cn_big.safetensors"], "outputs": [_o("CONTROL_NET", 1)]},
                {"id": 11, "type": "ControlNetLoader", "widgets_values": ["cn_small.safetensors"], "outputs": [_o("CONTROL_NET", 2)]},
                _apply(12, 1, None, None, [3], [4]),
                _apply(13, 2, None, None, [5], [6], image=10),
                _ksampler(3, 13, 3, 4, 7, [8, 9]),
                {"id": 5, "type": "VAEDecode", "inputs": [_i("samples", 9, "LATENT"), _i("vae", None, "VAE")],
                 "outputs": [_o("IMAGE", 10)]},
                _ksampler(4, 14, 5, 6, 8, [11]),
                {"id": 6, "type": "VAEDecode", "inputs": [_i("samples", 11, "LATENT"), _i("vae", None, "VAE")],
                 "outputs": [_o("IMAGE", 12)]},
                {"id": 7, "type": "SaveImage", "inputs": [_i("images", 12, "IMAGE")], "outputs": [], "widgets_values": ["x"]},
                links=[(1, 10, 0, 12, 2, "CONTROL_NET"), (2, 11, 0, 13, 2, "CONTROL_NET"),
                       (3, 12, 0, 3, 1, "CONDITIONING"), (4, 12, 1, 3, 2, "CONDITIONING"),
                       (5, 13, 0, 4, 1, "CONDITIONING"), (6, 13, 1, 4, 2, "CONDITIONING"), (7, 2, 0, 3, 3, "LATENT"),
                       (8, 3, 0, 4, 3, "LATENT"), (13, 1, 0, 3, 0, "MODEL"), (14, 1, 0, 4, 0, "MODEL"), (9, 3, 0, 5, 0, "LATENT"), (10, 5, 0, 13, 3, "IMAGE"),
                       (11, 4, 0, 6, 0, "LATENT"), (12, 6, 0, 7, 0, "IMAGE")])


def _two_samplers_api():
    """The same graph as ComfyUI's prompt (API format)."""
    def cn(i, name):
        return {"class_type": "ControlNetLoader", "inputs": {"control_net_name": name}}

    def apply(cn_id, image=None):
        return {"class_type": "ControlNetApplyAdvanced", "inputs": {"control_net": [cn_id, 0], "strength": 1.0,
                "start_percent": 0.0, "end_percent": 1.0, **({"image": image} if image else {})}}

    def ks(pos, latent):
        return {"class_type": "KSampler", "inputs": {"model": ["1", 0], "positive": [pos, 0], "negative": [pos, 1], "latent_image": latent,
                "seed": 1, "steps": 20, "cfg": 1.0, "sampler_name": "euler", "scheduler": "simple", "denoise": 1.0}}
    return {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "qwen_dm.safetensors", "weight_dtype": "default"}},
            "2": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
            "10": cn(10, "cn_big.safetensors"), "11": cn(11, "cn_small.safetensors"),
            "12": apply("10"), "13": apply("11", ["5", 0]),
            "3": ks("12", ["2", 0]), "5": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0]}},
            "4": ks("13", ["3", 0]), "6": {"class_type": "VAEDecode", "inputs": {"samples": ["4", 0]}},
            "7": {"class_type": "SaveImage", "inputs": {"images": ["6", 0], "filename_prefix": "x"}}}


def _before_after(tmp_path, wf, policy=None):
    d = _qwen(tmp_path / "models")
    before = workflow.estimate_workflow(wf, d, policy=policy)  # the ControlNet files not there yet: nothing added
    _file(d / "controlnet" / "cn_big.safetensors", CNET)
    _file(d / "controlnet" / "cn_small.safetensors", SMALL)
    return before, workflow.estimate_workflow(wf, d, policy=policy)


def _added(before, after, phase="sample"):
    b, a = before["breakdown"][phase], after["breakdown"][phase]
    return a["weights"] - b["weights"], a["activations"] - b["activations"]


def test_two_samplers_count_the_larger_controlnet_set_ui(tmp_path):
    before, after = _before_after(tmp_path, _two_samplers_ui())
    assert "side_models" not in before["breakdown"]["sample"]
    assert _added(before, after) == (CNET_BYTES, CNET_RESIDUALS)  # A's alone; the old code: A + B
    assert _added(before, after, "sample_naive_attention") == (CNET_BYTES, CNET_RESIDUALS)
    assert after["breakdown"]["sample"]["side_models"] == {A: {"weights": CNET_BYTES, "activations": CNET_RESIDUALS}}
    # 113,670,144 + 125,829,120 x 1.05 = 245,790,720 (the old code: + 37,761,024 + 50,331,648 x 1.05 more)
    assert FRAGMENTATION == 0.05
    assert abs((after["phases"]["sample"] - before["phases"]["sample"]) - 245_790_720) <= 1
    assert {m["owner"] for m in after["workflow"]["side_models"]} == {A, B}  # both loaded, both listed
    assert any(x.startswith("2 samplers, each with its own ControlNets (cn_big.safetensors (ControlNetLoader); "
                            "cn_small.safetensors (ControlNetLoader))") for x in after["assumptions"])


def test_two_samplers_count_the_larger_controlnet_set_api(tmp_path):
    before, after = _before_after(tmp_path, _two_samplers_api())
    assert _added(before, after) == (CNET_BYTES, CNET_RESIDUALS)
    assert set(after["breakdown"]["sample"]["side_models"]) == {A}


def test_the_larger_set_is_the_one_counted_whichever_sampler_has_it(tmp_path):
    """B on the base pass, A on the second: A is still the one counted (the set is chosen by size, not order)."""
    wf = _two_samplers_api()
    wf["10"]["inputs"]["control_net_name"], wf["11"]["inputs"]["control_net_name"] = "cn_small.safetensors", "cn_big.safetensors"
    before, after = _before_after(tmp_path, wf)
    assert _added(before, after) == (CNET_BYTES, CNET_RESIDUALS)


def test_models_resident_keep_both_weights_but_one_samplers_residuals(tmp_path):
    """Every model resident: both ControlNets' weights stay on the device; the residuals are still one sampler's."""
    before, after = _before_after(tmp_path, _two_samplers_ui(), policy={"models": "resident"})
    assert _added(before, after) == (CNET_BYTES + SMALL_BYTES, CNET_RESIDUALS)
    assert after["breakdown"]["sample"]["side_models"][B] == {"weights": SMALL_BYTES, "activations": 0}


def test_one_sampler_with_two_chained_controlnets_sums_both(tmp_path):
    """Apply 13 takes apply 12's conditioning (set_previous_controlnet, nodes.py:904-909): one sampler runs both."""
    wf = _two_samplers_ui()
    links = [x for x in wf["links"] if x[0] not in (3, 4, 5, 6, 10)]  # no image from the base pass: no cycle
    links += [[3, 12, 0, 13, 0, "CONDITIONING"], [4, 12, 1, 13, 1, "CONDITIONING"],
              [5, 13, 0, 3, 1, "CONDITIONING"], [6, 13, 1, 3, 2, "CONDITIONING"]]
    for n in wf["nodes"]:
        if n["id"] == 4:  # the second sampler keeps no ControlNet: its conditioning is not linked
            n["inputs"][1]["link"] = n["inputs"][2]["link"] = None
        if n["id"] == 13:
            n["inputs"][0]["link"], n["inputs"][1]["link"], n["inputs"][3]["link"] = 3, 4, None
        if n["id"] == 3:
            n["inputs"][1]["link"], n["inputs"][2]["link"] = 5, 6
    wf["links"] = links
    before, after = _before_after(tmp_path, wf)
    assert _added(before, after) == (CNET_BYTES + SMALL_BYTES, CNET_RESIDUALS + SMALL_RESIDUALS)
    assert any(x.startswith("2 samplers, each with its own ControlNets (cn_big.safetensors (ControlNetLoader), "
                            "cn_small.safetensors (ControlNetLoader); none)") for x in after["assumptions"])


def test_a_bypassed_apply_node_leaves_its_controlnet_out_of_the_sampler(tmp_path):
    """Apply 12 bypassed (mode 4): KSampler 3's conditioning passes through it; ControlNet A's loader runs for no
    output and is not read; B alone is counted."""
    wf = _two_samplers_ui()
    next(n for n in wf["nodes"] if n["id"] == 12)["mode"] = 4
    before, after = _before_after(tmp_path, wf)
    assert _added(before, after) == (SMALL_BYTES, SMALL_RESIDUALS)


def test_the_second_sampler_inside_a_subgraph_is_one_sampler_of_its_own(tmp_path):
    """The hires pass as a subgraph (frontend 1.35.9 definitions.subgraphs): its KSampler, Apply ControlNet and
    ControlNetLoader B inside, the base latent and the model through the instance's inputs. The walk goes in through
    the instance and out through the subgraph's inputs (reach.walk_ui); B is keyed in the subgraph (its id, node id)."""
    wf = _two_samplers_ui()
    wf["nodes"] = [n for n in wf["nodes"] if n["id"] not in (11, 13, 4, 5)] + [
        {"id": 20, "type": "sg-hires", "inputs": [_i("latent", 8, "LATENT"), _i("model", 14, "MODEL")],
         "outputs": [_o("LATENT", 11)]}]
    for n in wf["nodes"]:
        if n["id"] == 3:
            n["outputs"] = [_o("LATENT", 8)]
    wf["links"] = [x for x in wf["links"] if x[0] in (1, 3, 4, 7, 12, 13)] + [
        [8, 3, 0, 20, 0, "LATENT"], [14, 1, 0, 20, 1, "MODEL"], [11, 20, 0, 6, 0, "LATENT"]]

    def lk(i, o, os_, t, ts, typ):
        return {"id": i, "origin_id": o, "origin_slot": os_, "target_id": t, "target_slot": ts, "type": typ}
    inner = [{"id": 30, "type": "ControlNetLoader", "widgets_values": ["cn_small.safetensors"], "outputs": [_o("CONTROL_NET", 1)]},
             _apply(31, 1, None, None, [2], [3]), _ksampler(32, 5, 2, 3, 4, [6])]
    wf["definitions"] = {"subgraphs": [{
        "id": "sg-hires", "name": "hires", "nodes": inner, "inputNode": {"id": -10}, "outputNode": {"id": -20},
        "inputs": [{"name": "latent", "type": "LATENT"}, {"name": "model", "type": "MODEL"}],
        "outputs": [{"name": "LATENT", "type": "LATENT"}],
        "links": [lk(1, 30, 0, 31, 2, "CONTROL_NET"), lk(2, 31, 0, 32, 1, "CONDITIONING"), lk(3, 31, 1, 32, 2, "CONDITIONING"),
                  lk(4, -10, 0, 32, 3, "LATENT"), lk(5, -10, 1, 32, 0, "MODEL"), lk(6, 32, 0, -20, 0, "LATENT")]}]}
    before, after = _before_after(tmp_path, wf)
    assert {m["owner"] for m in after["workflow"]["side_models"]} == {A, B}
    assert _added(before, after) == (CNET_BYTES, CNET_RESIDUALS)
