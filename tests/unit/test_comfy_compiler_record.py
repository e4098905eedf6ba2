"""Is the Comfy Compiler on? ComfyUI 2026 runs comfy-aimdo's compiler together with Dynamic VRAM unless launched with
--disable-comfy-compiler (args.disable_comfy_compiler); ComfyUI 0.8.0 has no such flag (comfy/cli_args.py), so
there it is "not available". Runs record it as they record Dynamic VRAM, and the run comparison lists a change."""
import sys
import types

import pytest

from gpu_garden.memory.recorder import compare, record, report
from gpu_garden.nodes import host_models, recorder_state


def host(monkeypatch, flag, aimdo_enabled):
    """cli_args.args with disable_comfy_compiler = `flag` (... : no such flag); memory_management.aimdo_enabled
    (None: the attribute is gone)."""
    comfy = types.ModuleType("comfy")
    cli = types.ModuleType("comfy.cli_args")
    cli.args = types.SimpleNamespace(**({} if flag is ... else {"disable_comfy_compiler": flag}))
    mm = types.ModuleType("comfy.memory_management")
    if aimdo_enabled is not None:
        mm.aimdo_enabled = aimdo_enabled
    comfy.cli_args, comfy.memory_management = cli, mm
    for name, mod in (("comfy", comfy), ("comfy.cli_args", cli), ("comfy.memory_management", mm)):
        monkeypatch.setitem(sys.modules, name, mod)


@pytest.mark.parametrize("flag, aimdo, expected", [
    (..., True, "not available"),  # ComfyUI 0.8.0: no --disable-comfy-compiler
    (False, True, "on"),
    (True, True, "off"),  # --disable-comfy-compiler
    (False, False, "off"),  # Dynamic VRAM off (AMD, Apple, WSL, --disable-dynamic-vram): no compiler either
    (False, None, None),  # aimdo_enabled renamed upstream: unknown
])
def test_comfy_compiler_state(monkeypatch, flag, aimdo, expected):
    host(monkeypatch, flag, aimdo)
    assert host_models.comfy_compiler() == expected


def test_no_host_is_unknown(monkeypatch):
    monkeypatch.setitem(sys.modules, "comfy.cli_args", None)
    assert host_models.comfy_compiler() is None


def run(pid, compiler=...):
    r = record.new_run(pid, {}, 1000.0)
    if compiler is ...:
        r.pop("comfy_compiler", None)  # recorded before this field existed
    else:
        r["comfy_compiler"] = compiler
    return record.finish_run(r, 1010.0, "success", None)


def test_comparison_lists_a_compiler_change_never_an_old_record_without_it():
    ch = compare.compare(run("a", "off"), run("b", "on"))
    assert ch["changed"]["comfy_compiler"] == {"before": "off", "after": "on"} and "comfy_compiler" in ch["summary"]
    assert compare.what_changed(run("a", "on"), run("b", "on"))["comfy_compiler"] is None
    assert compare.what_changed(run("a"), run("b", "not available"))["comfy_compiler"] is None
    md = report.markdown(report.build(run("b", "on"), ch))
    assert "**Comfy Compiler:** on" in md and "- comfy_compiler: off → on" in md


def test_finalize_records_it(monkeypatch):
    host(monkeypatch, True, True)
    stored = []
    monkeypatch.setattr(recorder_state, "store", lambda: types.SimpleNamespace(add=stored.append, read=lambda: []))
    monkeypatch.setitem(recorder_state._state, "recorder", None)
    monkeypatch.setitem(recorder_state._state, "devices", [])
    monkeypatch.setitem(recorder_state._state, "versions", {})
    monkeypatch.setitem(recorder_state._state, "server", None)
    recorder_state._finalize(run("p"), None)
    assert stored[0]["comfy_compiler"] == "off" and stored[0]["dynamic_vram"] is True
