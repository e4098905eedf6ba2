"""POST /gpu_garden/estimate/workflow's body check (nodes/estimate_routes.py estimate_graph)."""
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError


@pytest.fixture
def routes(monkeypatch):
    from support.fit_stubs import fresh_node
    return fresh_node(monkeypatch, Path(__file__).parent / "stubs", "estimate_routes")


@pytest.mark.parametrize("vram", [True, "8", -1, float("nan"), float("inf"), 1e9])
def test_a_wrong_vram_gb_is_refused_not_read_as_a_budget(routes, vram):
    """{"vram_gb": true} was a 1 GiB budget (bool is an int) and "8" silently no budget; JSON's NaN/Infinity and
    absurd sizes an error in the middle of the estimate. Each is a 400 with the reason."""
    with pytest.raises(UserError, match="vram_gb"):
        routes.estimate_graph({"workflow": {}, "vram_gb": vram})
