"""fix17 (review17 W2, W3, W4): the workflow route and the node's button keep to the node's own facts."""
import importlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError

STUBS = Path(__file__).parent / "stubs"
WEB = Path(__file__).resolve().parents[2] / "web" / "lib"


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
