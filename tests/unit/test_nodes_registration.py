"""nodes/__init__.py: what the pack installs on which host."""
import importlib
import sys
from pathlib import Path

STUBS = Path(__file__).parent / "stubs"


def test_an_older_host_gets_no_hook(monkeypatch):
    """A ComfyUI without the V3 extension API loads the folder but registers none of its nodes; the pack must then
    install none of its hooks (its execute wrapper is async, its sampler wrappers assume the newer signatures)."""
    nodes = importlib.import_module("gpu_garden.nodes")
    imported = []
    monkeypatch.setattr(nodes, "_import", lambda name: imported.append(name))
    monkeypatch.setitem(sys.modules, "comfy_api.latest", None)  # import fails as on a host without it
    nodes.setup_server()
    assert imported == []
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api")]:
        monkeypatch.delitem(sys.modules, k)
    try:
        nodes.setup_server()  # the stub has ComfyExtension: every server module is set up
    finally:
        for k in [k for k in sys.modules if k.startswith("comfy_api")]:
            del sys.modules[k]  # the stub's modules leave with the test
    assert imported == list(nodes.SERVER_MODULES)
