"""rev62 F4 and F11. F4: LTX-2's two stages on the open-graph button. The stage-1 size can come from the Footprint Estimate node's
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
