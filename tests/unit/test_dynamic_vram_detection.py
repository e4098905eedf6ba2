"""Is Dynamic VRAM on? ComfyUI's comfy.cli_args.enables_dynamic_vram() is the request (true by default unless
--cpu/--highvram/--gpu-only/--novram/--disable-dynamic-vram); main.py then turns comfy-aimdo on only on NVIDIA
outside WSL with torch >= 2.8 and a working comfy-aimdo, and only then sets comfy.memory_management.aimdo_enabled
(comfyanonymous/ComfyUI main.py). On AMD, Apple, Intel, WSL or a failed init the request is true and Dynamic VRAM
is off: the estimate used to read the request and promised weight streaming that never happens."""
import importlib
import sys
import types
from pathlib import Path

import pytest

STUBS = Path(__file__).parent / "stubs"


@pytest.fixture
def est(monkeypatch):
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k == "gpu_garden.nodes.estimate"]:
        monkeypatch.delitem(sys.modules, k)
    return importlib.import_module("gpu_garden.nodes.estimate")


def host(monkeypatch, requested, aimdo_enabled):
    """A stand-in ComfyUI: cli_args answering `requested`; memory_management with `aimdo_enabled` (absent: None;
    the whole module absent when aimdo_enabled is ...)."""
    comfy = types.ModuleType("comfy")
    cli = types.ModuleType("comfy.cli_args")
    cli.enables_dynamic_vram = lambda: requested
    comfy.cli_args = cli
    monkeypatch.setitem(sys.modules, "comfy", comfy)
    monkeypatch.setitem(sys.modules, "comfy.cli_args", cli)
    if aimdo_enabled is ...:
        monkeypatch.setitem(sys.modules, "comfy.memory_management", None)  # import fails: ComfyUI 0.8.0
        return
    mm = types.ModuleType("comfy.memory_management")
    if aimdo_enabled is not None:
        mm.aimdo_enabled = aimdo_enabled
    comfy.memory_management = mm
    monkeypatch.setitem(sys.modules, "comfy.memory_management", mm)


def test_requested_but_not_initialised_is_off(est, monkeypatch):
    host(monkeypatch, requested=True, aimdo_enabled=False)  # an AMD / Apple / WSL host with default flags
    assert est.dynamic_vram_mode() == "off"


def test_initialised_is_on(est, monkeypatch):
    host(monkeypatch, requested=True, aimdo_enabled=True)
    assert est.dynamic_vram_mode() == "on"


def test_a_host_without_memory_management_has_no_dynamic_vram(est, monkeypatch):
    host(monkeypatch, requested=True, aimdo_enabled=...)
    assert est.dynamic_vram_mode() == "off"


def test_a_renamed_flag_falls_back_to_detection_not_to_the_request(est, monkeypatch):
    host(monkeypatch, requested=True, aimdo_enabled=None)
    assert est.dynamic_vram_mode() == "auto"
