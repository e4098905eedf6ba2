"""nodes/health.py without a host: features register once, ok/fail/uninstalled set the JSON shape the
sidebar reads, and a broken check marks only its own feature."""
from gpu_garden.nodes import health


def test_shape_and_state_changes(monkeypatch):
    monkeypatch.setattr(health, "_features", {})
    f = health.register("t.hook")
    assert health.register("t.hook") is f
    assert health.report()["features"]["t.hook"] == {"installed": False, "working": False, "last_error": None}
    f.ok()
    f.fail(RuntimeError("boom " + "x" * 2000))
    got = health.report()
    assert set(got) == {"pack_version", "comfyui_version", "features"}
    assert got["pack_version"] == "0.1.0"
    entry = got["features"]["t.hook"]
    assert entry["installed"] is True and entry["working"] is False
    assert entry["last_error"].startswith("RuntimeError: boom") and len(entry["last_error"]) == health.MAX_ERROR_CHARS
    f.ok()
    assert health.report()["features"]["t.hook"]["working"] is True


def test_check_runs_per_report_and_a_broken_check_fails_only_its_feature(monkeypatch):
    monkeypatch.setattr(health, "_features", {})
    state = {"hooked": True}
    health.register("a", check=lambda f: f.ok() if state["hooked"] else f.uninstalled("removed by hook breaker"))
    health.register("b", check=lambda f: 1 / 0)
    assert health.report()["features"]["a"]["installed"] is True
    state["hooked"] = False
    got = health.report()["features"]
    assert got["a"] == {"installed": False, "working": False, "last_error": "removed by hook breaker"}
    assert got["b"]["working"] is False and got["b"]["last_error"].startswith("ZeroDivisionError")


def test_a_switched_off_feature_is_a_state_not_a_failure(monkeypatch):
    monkeypatch.setattr(health, "_features", {})
    plain = health.register("plain").ok()
    auto = health.register("auto").ok().switch(False, "automatic mode off (setting X)")
    got = health.report()["features"]
    assert got["plain"] == {"installed": True, "working": True, "last_error": None}  # no new keys where no setting
    assert got["auto"] == {"installed": True, "working": True, "last_error": None, "enabled": False,
                           "note": "automatic mode off (setting X)"}
    auto.switch(True, "on")
    assert health.report()["features"]["auto"]["enabled"] is True
    assert plain.enabled is None
