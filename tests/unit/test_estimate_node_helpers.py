"""The Footprint Estimate node's translation layer without ComfyUI: loaded modules -> tensor tables (incl.
ComfyUI-GGUF's quantized tensors), latent shapes -> pixel sizes, the stop message, the UI payload."""
import importlib
import json
import sys
import types
from pathlib import Path

import pytest

from gpu_garden.memory import estimate as E, layouts
from gpu_garden.memory.units import GiB

STUBS = Path(__file__).parent / "stubs"


@pytest.fixture
def node(monkeypatch):
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k == "gpu_garden.nodes.estimate"]:
        monkeypatch.delitem(sys.modules, k)
    return importlib.import_module("gpu_garden.nodes.estimate")


class FakeTensor:
    def __init__(self, dtype, shape, **extra):
        self.dtype, self.shape = dtype, shape
        self.__dict__.update(extra)


class FakeModule:
    def __init__(self, sd):
        self._sd = sd

    def state_dict(self):
        return self._sd


def test_table_of_reads_torch_and_gguf_tensors(node):
    q8 = types.SimpleNamespace(name="Q8_0")
    m = FakeModule({"a.weight": FakeTensor("torch.bfloat16", (4, 8)),
                    "b.weight": FakeTensor("torch.uint8", (3072, 68), tensor_type=q8, tensor_shape=(3072, 64)),
                    "c.weight": FakeTensor("torch.float8_e4m3fn", (16, 16))})
    assert node.table_of(m) == {"a.weight": ("BF16", (4, 8)), "b.weight": ("Q8_0", (3072, 64)), "c.weight": ("F8_E4M3", (16, 16))}


@pytest.mark.parametrize("shape,family,size", [
    ([1, 4, 64, 64], "sd1", (512, 512, 1, 1)),
    ([2, 16, 128, 96], "flux1", (768, 1024, 1, 2)),
    ([1, 16, 21, 60, 104], "wan21", (832, 480, 81, 1)),
    ([1, 48, 31, 44, 80], "wan22", (1280, 704, 121, 1)),
])
def test_latent_size(node, shape, family, size):
    assert node.latent_size(shape, family) == size


def test_stop_message_and_ui_payload(node):
    t = {k: (v["dtype"], tuple(v["shape"])) for k, v in layouts.load("flux_flux1-dev")["tensors"].items()}
    est = E.judge(E.estimate([{"table": t, "role": "diffusion_model", "source": "MODEL"}], 1024, 1024, cfg=None), 16 * GiB)
    msg = node.stop_message(est)
    assert "stopped the run before sampling" in msg and "16.00 GiB" in msg and "\n" not in msg
    assert "out of memory" not in msg.lower()  # must not be mistaken for an OOM by the OOM capture
    ui = node.for_ui(est, "16 GiB (set on the node)", None)
    json.dumps(ui)
    assert ui["verdict"] == "does not fit" and ui["summary"].startswith("DOES NOT FIT")
    assert len(ui["knobs"]) <= 5 and "_ctx" not in ui


def test_budget_from_node_input(node):
    snap = {"devices": [{"index": 0, "name": "GPU", "backend": "cuda", "total": 24 * GiB, "other_processes": 2 * GiB}]}
    assert node.live_budget(snap, 0)[0] == 22 * GiB
    assert node.live_budget(snap, 12)[0] == 12 * GiB
