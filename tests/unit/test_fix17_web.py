"""fix17 (review17 W2, W3, W4): the workflow route and the node's button keep to the node's own facts."""
import importlib
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from support import node_js

STUBS = Path(__file__).parent / "stubs"


@pytest.fixture
def routes(monkeypatch):
    from support.fit_stubs import fresh_node
    return fresh_node(monkeypatch, STUBS, "estimate_routes")


def test_w2_the_route_checks_the_size_against_the_node_s_own_ranges(routes, monkeypatch):
    """One table (nodes/estimate.SIZE_RANGES) for the widgets and the route: narrowing it narrows what the route takes."""
    node = importlib.import_module("gpu_garden.nodes.estimate")  # the copy fresh_node's stubs import
    assert routes.body_size({"width": 4096, "height": 4096}) == (4096, 4096, 1, 1)
    monkeypatch.setitem(node.SIZE_RANGES, "width", (64, 2048))
    with pytest.raises(UserError, match="width must be a whole number from 64 to 2048"):
        routes.body_size({"width": 4096, "height": 4096})


def node_size(node: dict) -> dict:
    return node_js.call("lib/node_size.js", "nodeSize", node)


WIDGETS = [{"name": "width", "value": 832}, {"name": "height", "value": 480}, {"name": "frames", "value": 81},
           {"name": "batch", "value": 1}]


def test_w3_a_linked_size_input_sends_no_stale_widget_value():
    """A widget whose input is linked keeps its last value in the frontend; the node uses the link's. The button
    leaves it out (here the linked width takes width and height out together: the route wants both or neither)."""
    assert node_size({"widgets": WIDGETS, "inputs": [{"name": "model", "link": 3}]}) == \
        {"width": 832, "height": 480, "frames": 81, "batch": 1}
    linked = {"widgets": WIDGETS, "inputs": [{"name": "width", "widget": {"name": "width"}, "link": 7}]}
    assert node_size(linked) == {}
    frames = {"widgets": WIDGETS, "inputs": [{"name": "frames", "widget": {"name": "frames"}, "link": 9}]}
    assert node_size(frames) == {"width": 832, "height": 480, "batch": 1}
    # an input converted from a widget but not linked: the widget's value stands
    free = {"widgets": WIDGETS, "inputs": [{"name": "width", "widget": {"name": "width"}, "link": None}]}
    assert node_size(free)["width"] == 832


def test_w4_vram_gb_on_a_cpu_host_says_the_card_is_judged_with_fp32_weights(monkeypatch, tmp_path):
    """--cpu keeps fp32 (host_policy) while vram_gb plans for a card, which would run 16-bit: the answer says so."""
    from gpu_garden.memory.estimate import layouts, verdict
    from gpu_garden.nodes import host_models
    from support.fit_stubs import fresh_node
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", tmp_path / "checkpoints" / "sd15.safetensors")
    r = fresh_node(monkeypatch, STUBS, "estimate_routes")
    monkeypatch.setattr(r, "resolve", lambda folders, name: next(
        (str(tmp_path / f / name) for f in folders if (tmp_path / f / name).is_file()), None))
    monkeypatch.setattr(verdict, "host_available_ram", lambda: 64 << 30)
    wf = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd15.safetensors"}},
          "3": {"class_type": "KSampler", "inputs": {"cfg": 7.0, "model": ["4", 0]}},
          "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 768, "batch_size": 4}}}
    for backend, vram, said in (("cpu", 8, True), ("cpu", None, False), ("cuda", 8, False)):
        monkeypatch.setattr(host_models, "compute_backend", lambda b=backend: b)
        out = r.estimate_graph({"workflow": wf, "vram_gb": vram})
        assert any("vram_gb on a --cpu host" in a and "fp32" in a for a in out["assumptions"]) is said, (backend, vram)
