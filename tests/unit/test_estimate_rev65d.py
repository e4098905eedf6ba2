"""rev65d #2 and rev65e #1, the reviewers' repros of est65's MODEL walk made tests.

rev65d #2: a patched model merged in as ModelMergeSimple's model2 does not carry the patch (ComfyUI 0.8.0
comfy_extras/nodes_model_merging.py:26-31: m = model1.clone(), only model2's weights as key patches; clone copies
model1's model_options, comfy/model_patcher.py:296): a merge passes on model1's patches only.
rev65e #1: a node the walk does not know passes its MODEL on under any input name (ComfyUI 0.8.0's own Switch,
ComfySwitchNode: on_true/on_false, comfy_extras/nodes_logic.py:11-39; rgthree's Any Switch; Impact's basic pipe; rgthree's
Reroute in the UI format): every input of such a node is followed, as the conditioning walk does, so a patch is never
lost on the way (an undercount is worse than an overcount).

(rev65d #1's tests left with the revert of 02173f55: a typed size is every sampler's and every decode's size, so the
base decode of a hires fix is the typed size; see docs/estimate.md and rev65e #3.)"""
import pytest

from gpu_garden.memory.estimate import control_feeds, workflow
from test_estimate_est65 import PATCH_BYTES, _two_branches, _with_patch


# -- 2: a merge passes on model1's patches only --------------------------------------------------------------------
# test_estimate_est65._two_branches: KSampler 3 at 512 on the patched model (QwenImageDiffsynthControlnet 21),
# KSampler 4 at 1024 (the run counted) on the plain one; the patch is 19,691,520 bytes.

@pytest.mark.parametrize("merge", ["ModelMergeSimple", "ModelSubtract", "ModelAdd", "ModelMergeBlocks",
                                   "ModelMergeSDXL"])
def test_patch_on_model2_of_a_merge_is_not_carried(tmp_path, merge):
    """main: the patch reached through model2 and added to the 1024 run: (19,691,520, 0)."""
    wf = _two_branches("small")
    wf["30"] = {"class_type": merge, "inputs": {"model1": ["1", 0], "model2": ["21", 0]}}
    wf["4"]["inputs"]["model"] = ["30", 0]  # the 1024 sampler on model1 = plain, merged with the patched one's weights
    added, after = _with_patch(tmp_path, wf)
    assert after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    assert added == (0, 0)


def test_patch_on_model1_of_a_merge_is_carried(tmp_path):
    wf = _two_branches("small")
    wf["30"] = {"class_type": "ModelMergeSimple", "inputs": {"model1": ["21", 0], "model2": ["1", 0], "ratio": 0.5}}
    wf["4"]["inputs"]["model"] = ["30", 0]
    added, after = _with_patch(tmp_path, wf)
    assert after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    assert added == (PATCH_BYTES, 0)


def _ui_subgraph_patch():
    """UI format: the sampler's model comes out of a subgraph instance that applies the patch inside (the frontend's
    subgraph: an inner QwenImageDiffsynthControlnet on the instance's model input, its ModelPatchLoader inside too)."""
    sub = {"id": "sub-1", "inputNode": {"id": -10}, "outputNode": {"id": -20}, "inputs": [{"name": "model"}],
           "nodes": [{"id": 10, "type": "ModelPatchLoader", "outputs": [{"links": [12]}]},
                     {"id": 11, "type": "QwenImageDiffsynthControlnet", "outputs": [{"links": [13]}],
                      "inputs": [{"name": "model", "link": 11}, {"name": "model_patch", "link": 12}]}],
           "links": [[11, -10, 0, 11, 0, "MODEL"], [12, 10, 0, 11, 1, "MODEL_PATCH"], [13, 11, 0, -20, 0, "MODEL"]]}
    nodes = [{"id": 1, "type": "UNETLoader", "outputs": [{"links": [1]}]},
             {"id": 2, "type": "sub-1", "inputs": [{"name": "model", "link": 1}], "outputs": [{"links": [2]}]},
             {"id": 3, "type": "KSampler", "inputs": [{"name": "model", "link": 2}], "outputs": [{"links": [3]}]},
             {"id": 4, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 3}], "outputs": [{"links": [4]}]},
             {"id": 5, "type": "SaveImage", "inputs": [{"name": "images", "link": 4}]}]
    links = [[1, 1, 0, 2, 0, "MODEL"], [2, 2, 0, 3, 0, "MODEL"], [3, 3, 0, 4, 0, "LATENT"], [4, 4, 0, 5, 0, "IMAGE"]]
    return {"nodes": nodes, "links": links, "definitions": {"subgraphs": [sub]}}


def test_a_patch_inside_a_subgraph_on_the_samplers_model_is_reached():
    """The MODEL walk enters a subgraph instance as before (reach.walk_ui enters one only when every input is
    followed), and the inner nodes are read by the same table (image_z_image_turbo_fun_union_controlnet's patch node is
    inside a subgraph)."""
    assert control_feeds.feeds(_ui_subgraph_patch()) == [{("sub-1", 10)}]


# -- rev65e #1: a pass-through node carries the patched model on --------------------------------------------------

def _via(kind):
    wf = _two_branches("small")  # KSampler 3 (512) on the patched model 21; KSampler 4 (1024) on the plain one
    if kind == "ComfySwitchNode":
        wf["30"] = {"class_type": "ComfySwitchNode", "inputs": {"switch": True, "on_true": ["21", 0],
                                                                "on_false": ["1", 0]}}
        wf["4"]["inputs"]["model"] = ["30", 0]
    elif kind == "Any Switch (rgthree)":
        wf["30"] = {"class_type": "Any Switch (rgthree)", "inputs": {"any_01": ["21", 0]}}
        wf["4"]["inputs"]["model"] = ["30", 0]
    else:  # Impact Pack: ToBasicPipe -> FromBasicPipe (outputs basic_pipe, model, clip, vae, positive, negative)
        wf["30"] = {"class_type": "ToBasicPipe", "inputs": {"model": ["21", 0], "clip": ["1", 0], "vae": ["1", 0],
                                                            "positive": ["9", 0], "negative": ["9", 0]}}
        wf["31"] = {"class_type": "FromBasicPipe", "inputs": {"basic_pipe": ["30", 0]}}
        wf["4"]["inputs"]["model"] = ["31", 1]
    return wf


@pytest.mark.parametrize("kind", ["ComfySwitchNode", "Any Switch (rgthree)", "ToBasicPipe"])
def test_patched_model_through_a_pass_through_node_reaches_the_1024_run(tmp_path, kind):
    added, after = _with_patch(tmp_path, _via(kind))
    assert after["breakdown"]["sample"]["sampler"]["size"] == [1024, 1024]
    assert added[0] == PATCH_BYTES  # the 1024 run loads the patch (its model carries it)


def _ui_rgthree_reroute():
    """UI format: the patched model through rgthree's 'Reroute (rgthree)' (input named "", type "*") to the sampler."""
    nodes = [{"id": 1, "type": "UNETLoader", "outputs": [{"links": [1]}]},
             {"id": 10, "type": "ModelPatchLoader", "outputs": [{"links": [12]}]},
             {"id": 11, "type": "QwenImageDiffsynthControlnet", "outputs": [{"links": [13]}],
              "inputs": [{"name": "model", "type": "MODEL", "link": 1},
                         {"name": "model_patch", "type": "MODEL_PATCH", "link": 12}]},
             {"id": 12, "type": "Reroute (rgthree)", "inputs": [{"name": "", "type": "*", "link": 13}],
              "outputs": [{"links": [2]}]},
             {"id": 3, "type": "KSampler", "inputs": [{"name": "model", "type": "MODEL", "link": 2}],
              "outputs": [{"links": [3]}]},
             {"id": 4, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 3}], "outputs": [{"links": [4]}]},
             {"id": 5, "type": "SaveImage", "inputs": [{"name": "images", "link": 4}]}]
    links = [[1, 1, 0, 11, 0, "MODEL"], [12, 10, 0, 11, 1, "MODEL_PATCH"], [13, 11, 0, 12, 0, "MODEL"],
             [2, 12, 0, 3, 0, "MODEL"], [3, 3, 0, 4, 0, "LATENT"], [4, 4, 0, 5, 0, "IMAGE"]]
    return {"nodes": nodes, "links": links}


def test_ui_patch_through_rgthree_reroute_is_reached():
    from gpu_garden.memory.estimate import control_feeds
    assert control_feeds.feeds(_ui_rgthree_reroute()) == [{(None, 10)}]
