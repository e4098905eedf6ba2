"""rev62 F4, F6, F9 and F11 (each test names its finding). F4: LTX-2's two stages on the open-graph button. The stage-1 size can come from the Footprint Estimate node's
own widgets (no latent node: the route's default_size); the assumption line said 'the graph's latent' whatever the
source, and the face labelled stage 2's doubled size '(the node's size: no latent node)'. Now the workflow answer
carries stage1 and the line names where it came from; the face (web/lib/estimate_size.js graphSizeText) puts the
label on the stage-1 size and says 'two stages', as the node's own face does."""
from gpu_garden.memory.estimate import workflow

from test_estimate_ltx64 import LOADER, UP, _models


def _no_latent(*extra):
    nodes = [{"id": 1, "type": "UNETLoader", "widgets_values": ["ltx2.safetensors", "default"]}]
    return {"nodes": nodes + [dict(n, id=10 + i) for i, n in enumerate(extra)], "links": []}


def test_stage_one_from_the_nodes_size_is_named_so(tmp_path):
    est = workflow.estimate_workflow(_no_latent(LOADER, UP), _models(tmp_path), default_size=(768, 512, 97, 1))
    # stage 2: 2 x (768 // 32) x 32 by 2 x (512 // 32) x 32 (LTX-2's 32-pixel latent)
    assert (est["width"], est["height"], est["frames"]) == (1536, 1024, 97)
    assert est["workflow"]["stage1"] == [768, 512] and est["workflow"]["size_given_used"]
    assert any(a.startswith("LTXVLatentUpsampler: two stages; the size given beside the workflow (768x512) is the first's")
               for a in est["assumptions"]), est["assumptions"]


def test_one_stage_has_no_stage1(tmp_path):
    est = workflow.estimate_workflow(_no_latent(LOADER), _models(tmp_path), default_size=(768, 512, 97, 1))
    assert (est["width"], est["height"]) == (768, 512) and est["workflow"]["stage1"] is None


def test_the_graph_face_labels_the_stage_one_size():
    from support.node_js import call

    a = {"width": 1536, "height": 1024, "frames": 97, "size_from": "body", "size_assumed": None,
         "stage1": {"width": 768, "height": 512}}
    assert call("lib/estimate_size.js", "graphSizeText", a) == \
        "two stages: 768×512×97f (the node's size: no latent node) upscaled to 1536×1024×97f (latent upscale)"
    assert call("lib/estimate_size.js", "graphSizeText", dict(a, stage1=None, width=768, height=512)) == \
        "768×512×97f (the node's size: no latent node)"
    assert call("lib/estimate_size.js", "graphSizeText", dict(a, stage1=None, size_from="assumed",
                                                                size_assumed="assumed: the native size of LTX-2")) == \
        "1536×1024×97f (assumed: the native size of LTX-2)"


def test_cli_upscale_names_the_rounding_of_stage_ones_size(tmp_path, capsys):
    """rev62 F11: with --upscale the rounding note was taken on stage 2's size (always a multiple of 32), so a stage-1
    width of 1000 was rounded down to 992 (LTX-2's latent is 1/32) without a word."""
    from test_estimate_ups65 import _json

    d = _models(tmp_path)
    out = _json(capsys, str(d / "diffusion_models" / "ltx2.safetensors"), "--width", "1000", "--height", "352",
                "--frames", "97", "--upscale", "auto", "--vram", "80", "--ram", "64")
    assert (out["width"], out["height"]) == (2 * 992, 2 * 352)  # 1000 // 32 = 31 latent columns, doubled
    assert "1000x352 is not a multiple of 32: ComfyUI's latent node rounds it down to 992x352 (latent 31x11)" \
        in out["assumptions"], out["assumptions"]


# -- rev62 F6: legacy group nodes (extra.groupNodes) -------------------------------------------------------------------

def _grouped(instance_values, mode=0):
    """A txt2img group node made with frontend 1.35.9's Convert to Group Node: a checkpoint loader and an empty latent
    inside, saved with sd15 at 512x512; the instance's widgets are theirs in inner-node order."""
    return {"nodes": [{"id": 10, "type": "workflow>txt2img", "mode": mode, "widgets_values": instance_values},
                      {"id": 11, "type": "KSampler", "widgets_values": [1, "fixed", 20, 7.0, "euler", "normal", 1.0]}],
            "links": [], "version": 0.4,
            "extra": {"groupNodes": {"txt2img": {"nodes": [
                {"type": "CheckpointLoaderSimple", "index": 0, "widgets_values": ["sd15.safetensors"],
                 "outputs": [{"name": "MODEL", "type": "MODEL"}, {"name": "CLIP", "type": "CLIP"}, {"name": "VAE", "type": "VAE"}]},
                {"type": "EmptyLatentImage", "index": 1, "widgets_values": [512, 512, 1],
                 "outputs": [{"name": "LATENT", "type": "LATENT"}]}], "links": [], "external": []}}}}
    # (a definition's inner outputs carry no "links": the graph's links are the group node's, F5's reading must not drop them)


def _sd15(tmp_path):
    from gpu_garden.memory.estimate import layouts

    d = tmp_path / "models"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "other.safetensors")
    return d


def test_a_group_nodes_inner_loader_and_latent_are_read_with_the_instances_values(tmp_path):
    est = workflow.estimate_workflow(_grouped(["other.safetensors", 768, 512, 2]), _sd15(tmp_path))
    assert (est["width"], est["height"], est["batch"]) == (768, 512, 2)
    assert est["workflow"]["files"] == ["other.safetensors"]
    assert any(a.startswith("group node workflow>txt2img: its 2 inner nodes read with the values the group node holds")
               for a in est["assumptions"]), est["assumptions"]


def test_a_group_node_whose_values_do_not_map_reads_its_definition_and_says_so(tmp_path):
    est = workflow.estimate_workflow(_grouped(["other.safetensors", 768]), _sd15(tmp_path))
    assert (est["width"], est["height"]) == (512, 512) and est["workflow"]["files"] == ["sd15.safetensors"]
    assert any("with the values saved in its definition" in a for a in est["assumptions"])


def test_a_bypassed_group_node_is_not_read(tmp_path):
    import pytest

    from gpu_garden.memory.errors import UserError

    with pytest.raises(UserError, match="none of the workflow's model files was found"):
        workflow.estimate_workflow(_grouped(["other.safetensors", 768, 512, 2], mode=4), _sd15(tmp_path))


def test_a_missing_upscaler_in_a_two_stage_graph_is_not_said_to_be_uncounted(tmp_path):
    """rev62 F9: LatentUpscaleModelLoader's file not found beside an LTXVLatentUpsampler: the step is counted with the
    bundled x2 (tests/unit/test_estimate_ltx64.py pins the line), so 'not found, and not counted if found' was false."""
    est = workflow.estimate_workflow({"nodes": [{"id": 1, "type": "UNETLoader", "widgets_values": ["ltx2.safetensors", "default"]},
                                                {"id": 2, "type": "EmptyLTXVLatentVideo", "widgets_values": [640, 352, 97, 1]},
                                                dict(LOADER, id=3), dict(UP, id=4)], "links": []}, _models(tmp_path, upscaler=False))
    assert "latent_upscale" in est["phases"]
    assert not any("not counted if found" in a for a in est["assumptions"]), est["assumptions"]


def test_comfyuis_diffusers_loader_is_named_as_such_not_as_a_custom_nodes():
    """rev62 F9: ComfyUI's own DiffusersLoader (nodes.py:588, a diffusers folder: model, CLIP and VAE) was called 'a loader
    the estimate does not know (a custom node's?)'."""
    from gpu_garden.memory.estimate import model_files

    lines = model_files.not_followed([("DiffusersLoader", {"model_path": "sd-turbo"})])
    assert lines == ["not counted, loaded beside the models estimated: sd-turbo (DiffusersLoader: a diffusers-format "
                     "model folder (the estimate reads single files))"], lines


# -- rev62 F5: a node whose outputs feed nothing never runs (execution.py runs the output nodes and what they need) ------

def _out(*links):
    return [{"name": "OUT", "type": "LATENT", "links": list(links)}]


def test_an_unconnected_upsampler_is_not_a_second_stage(tmp_path):
    """An LTXVLatentUpsampler left on the canvas with no link out: one stage at 640x352, not 1280x704 with an upscale
    phase (four times the sampled area)."""
    g = {"nodes": [{"id": 1, "type": "UNETLoader", "widgets_values": ["ltx2.safetensors", "default"], "outputs": _out(1)},
                   {"id": 2, "type": "EmptyLTXVLatentVideo", "widgets_values": [640, 352, 97, 1], "outputs": _out(2)},
                   dict(LOADER, id=3, outputs=_out()), dict(UP, id=4, outputs=_out())], "links": []}
    est = workflow.estimate_workflow(g, _models(tmp_path))
    assert (est["width"], est["height"]) == (640, 352) and "latent_upscale" not in est["phases"]
    g["nodes"][3]["outputs"] = _out(9)  # its output linked: stage 2 at twice the latent's width and height
    est = workflow.estimate_workflow(g, _models(tmp_path))
    assert (est["width"], est["height"]) == (1280, 704) and "latent_upscale" in est["phases"]


def test_an_unconnected_latent_node_does_not_set_the_size(tmp_path):
    """02_qwen_Image_edit_subgraphed (comfyui-workflow-templates 0.7.67) keeps an EmptySD3LatentImage of 2560x1440 whose
    output links to nothing beside the edited image's VAEEncode: the graph's size is the one it samples, not 2560x1440."""
    d = _sd15(tmp_path)
    g = {"nodes": [{"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": ["sd15.safetensors"], "outputs": _out(1)},
                   {"id": 2, "type": "EmptyLatentImage", "widgets_values": [512, 768, 1], "outputs": _out(2)},
                   {"id": 3, "type": "EmptyLatentImage", "widgets_values": [2560, 1440, 1], "outputs": _out()}], "links": []}
    est = workflow.estimate_workflow(g, d)
    assert (est["width"], est["height"]) == (512, 768)
    del g["nodes"][2]["outputs"]  # no outputs listed (a hand-made or older file): read as before
    assert (workflow.estimate_workflow(g, d)["width"], ) == (2560, )
