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


def test_the_report_names_each_feature_by_its_title(monkeypatch):
    """The sidebar tab names a feature by what it does; the title comes from the server (health.TITLES, the one table
    of them), so the page keeps no second list of feature ids. A feature without a row shows its id alone."""
    monkeypatch.setattr(health, "_features", {})
    health.register("budget.push").ok()
    health.register("budget_routes").uninstalled("ImportError: boom")  # a module that failed to import
    got = health.report()["features"]
    assert got["budget.push"]["title"] == "Live memory bar and meter"
    assert "title" not in got["budget_routes"]


def _registered_ids() -> set:
    """Every feature id the pack registers: those its modules register on import, the OOM capture's hooks, and each
    literal id passed to health.register / recorder_state._feature anywhere in nodes/."""
    import importlib
    import re
    from pathlib import Path

    from gpu_garden.nodes import oom_capture

    for name in ("auto_unload", "budget_routes", "fit_guard", "estimate_routes", "oom_capture", "recorder"):
        importlib.import_module(f"gpu_garden.nodes.{name}")
    ids = {n for n in health._features if "." in n}
    ids |= {f"oom_capture.{n}" for n in oom_capture.HOOK_NAMES}
    src = Path(health.__file__).parent
    for path in src.glob("*.py"):
        ids |= set(re.findall(r"""(?:register|_feature)\(\s*["']([a-z_]+\.[a-z_.]+)["']""", path.read_text()))
    return ids


def test_every_registered_feature_has_a_title_and_every_title_a_feature():
    ids = _registered_ids()
    assert {"recorder.store", "oom_capture.execute", "budget.push"} <= ids, ids  # the scan finds what it should
    assert sorted(ids - set(health.TITLES)) == [], "a registered feature has no title in nodes/health.py TITLES"
    assert sorted(set(health.TITLES) - ids) == [], "a title names no registered feature"
    for title in health.TITLES.values():
        assert title and "_" not in title, title


def test_the_page_keeps_no_table_of_feature_ids():
    from pathlib import Path

    web = Path(health.__file__).resolve().parents[1] / "web"
    for path in web.rglob("*.js"):
        text = path.read_text()
        assert "FEATURE_TITLES" not in text and '"oom_capture.execute"' not in text, path
