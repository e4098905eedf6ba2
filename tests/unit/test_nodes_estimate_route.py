"""POST /gpu_garden/estimate/workflow's body check (nodes/estimate_routes.py estimate_graph)."""
import importlib
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError

STUBS = Path(__file__).parent / "stubs"


@pytest.fixture
def routes(monkeypatch):
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k == "gpu_garden.nodes.estimate"]:
        monkeypatch.delitem(sys.modules, k)
    return importlib.import_module("gpu_garden.nodes.estimate_routes")


@pytest.mark.parametrize("vram", [True, "8", -1, float("nan"), float("inf"), 1e9])
def test_a_wrong_vram_gb_is_refused_not_read_as_a_budget(routes, vram):
    """{"vram_gb": true} was a 1 GiB budget (bool is an int) and "8" silently no budget; JSON's NaN/Infinity and
    absurd sizes an error in the middle of the estimate. Each is a 400 with the reason."""
    with pytest.raises(UserError, match="vram_gb"):
        routes.estimate_graph({"workflow": {}, "vram_gb": vram})
