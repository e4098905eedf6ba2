"""Under --multi-user each user has their own GPUGarden.FitToCard / AutoUnloadTextEncoders setting. The status a
page reads (GET /gpu_garden/fit, the health tab's "on"/"off") must be the asking user's, not the "default" user's
or the user whose prompt happens to run: alice turned Fit to Card on and her health tab said "off"."""
import json
import os
import sys
import types

import pytest

from gpu_garden.nodes import auto_unload, fit_guard, health


@pytest.fixture
def users(tmp_path, monkeypatch):
    """A user directory with alice's settings (both automatic modes on) and default's (none)."""
    fp = types.ModuleType("folder_paths")
    fp.get_user_directory = lambda: str(tmp_path)
    fp.get_public_user_directory = lambda user: None if user.startswith("__") else os.path.join(str(tmp_path), user)
    monkeypatch.setitem(sys.modules, "folder_paths", fp)
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "comfy.settings.json").write_text(json.dumps({fit_guard.SETTING_ID: True, auto_unload.SETTING_ID: True}))
    (tmp_path / "default").mkdir()
    (tmp_path / "default" / "comfy.settings.json").write_text("{}")
    monkeypatch.setattr(auto_unload, "running_client_id", lambda: None)  # no prompt running
    monkeypatch.setitem(auto_unload._state, "cache", {})
    return tmp_path


def test_fit_status_is_the_asking_user_s(users):
    assert fit_guard.status("alice")["enabled"] is True
    assert fit_guard.status("default")["enabled"] is False
    assert fit_guard.status()["enabled"] is False  # nobody named, no prompt running: "default"


def test_health_tab_shows_the_asking_user_s_automatic_modes(users, monkeypatch):
    sh = types.ModuleType("comfy.sampler_helpers")
    sh.prepare_sampling = lambda *a, **k: None
    comfy = types.ModuleType("comfy")
    comfy.sampler_helpers = sh
    monkeypatch.setitem(sys.modules, "comfy", comfy)
    monkeypatch.setitem(sys.modules, "comfy.sampler_helpers", sh)
    monkeypatch.setitem(fit_guard._state, "installed", True)
    monkeypatch.setitem(auto_unload._state, "installed", True)
    monkeypatch.setattr(fit_guard, "_ours", lambda fn: True)
    monkeypatch.setattr(auto_unload, "_ours", lambda fn: True)
    for user, on in (("alice", True), ("default", False), (None, False)):
        got = health.report(user=user)["features"]
        assert got["fit_guard.prepare_sampling"]["enabled"] is on, user
        assert got["auto_unload.prepare_sampling"]["enabled"] is on, user
    # a prompt of alice's is running: a page that does not name its user still reads the running prompt's
    auto_unload.remember("alice-page", "alice")
    monkeypatch.setattr(auto_unload, "running_client_id", lambda: "alice-page")
    assert health.report()["features"]["fit_guard.prepare_sampling"]["enabled"] is True
    assert health.report(user="default")["features"]["fit_guard.prepare_sampling"]["enabled"] is False
