"""ComfyUI's model management is reached through nodes/host_models.py alone, each read with a fallback: the Unload
node unregisters one LoadedModel (only the private current_loaded_models list can), Fit to Card reads
MIN_WEIGHT_MEMORY_RATIO, the recorder names its device and its total."""
import importlib
import sys
import types
from pathlib import Path

import pytest

STUBS = Path(__file__).parent / "stubs"


@pytest.fixture(autouse=True)
def nodes(monkeypatch):
    """Fresh pack modules on the stand-in comfy_api (other files re-import them)."""
    global host_models, recorder_state, unload, fit_guard
    monkeypatch.syspath_prepend(str(STUBS))
    host_models = importlib.import_module("gpu_garden.nodes.host_models")
    recorder_state = importlib.import_module("gpu_garden.nodes.recorder_state")
    unload = importlib.import_module("gpu_garden.nodes.unload")
    fit_guard = importlib.import_module("gpu_garden.nodes.fit_guard")


def fake_mm(monkeypatch, **attrs):
    comfy = types.ModuleType("comfy")
    mm = types.ModuleType("comfy.model_management")
    for k, v in attrs.items():
        setattr(mm, k, v)
    comfy.model_management = mm
    monkeypatch.setitem(sys.modules, "comfy", comfy)
    monkeypatch.setitem(sys.modules, "comfy.model_management", mm)
    return mm


class Entry:
    def __eq__(self, other):  # LoadedModel compares by its patcher: removal must go by identity
        return True


def test_forget_loaded_removes_that_entry_only(monkeypatch):
    a, b = Entry(), Entry()
    mm = fake_mm(monkeypatch, current_loaded_models=[a, b])
    assert host_models.forget_loaded(b) is True and mm.current_loaded_models[0] is a and len(mm.current_loaded_models) == 1
    assert host_models.forget_loaded(b) is False
    fake_mm(monkeypatch)  # the list renamed upstream: nothing to edit, no error
    assert host_models.forget_loaded(a) is False


def test_unload_unregisters_through_the_adapter(monkeypatch):
    gone = []
    monkeypatch.setattr(host_models, "forget_loaded", gone.append)
    fake_mm(monkeypatch)  # no current_loaded_models: the node must not touch model management itself
    lm = types.SimpleNamespace(model_finalizer=object(), model_unload=lambda: True)
    unload._full_unload(lm)
    assert gone == [lm]


def test_min_weight_ratio_live_or_the_plans_default(monkeypatch):
    from gpu_garden.memory.fit import plan

    fake_mm(monkeypatch, MIN_WEIGHT_MEMORY_RATIO=0.0)
    assert host_models.min_weight_memory_ratio(0.4) == 0.0
    fake_mm(monkeypatch)
    assert host_models.min_weight_memory_ratio(0.4) == 0.4
    assert fit_guard.min_weight_ratio() == plan.MIN_WEIGHT_RATIO


def test_recorder_lists_its_device_when_the_total_is_unreadable(monkeypatch):
    """A host whose get_total_memory is gone: the run still names its GPU (total unknown), not host RAM alone."""
    fake_mm(monkeypatch, get_torch_device_name=lambda dev: "cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync")
    meter = types.SimpleNamespace(key="cuda:0", kind="cuda", device="cuda:0",
                                  psutil=types.SimpleNamespace(virtual_memory=lambda: types.SimpleNamespace(total=64)))
    devs = recorder_state._devices(meter)
    assert devs[0] == {"device": "cuda:0", "name": "cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync", "total": None,
                       "backend": "cuda"}
    fake_mm(monkeypatch, get_torch_device_name=lambda dev: "GPU", get_total_memory=lambda dev: 12 * 2 ** 30)
    assert recorder_state._devices(meter)[0]["total"] == 12 * 2 ** 30
    assert recorder_state._devices(meter)[-1]["device"] == "cpu"
