"""GET /gpu_garden/health on a freshly started ComfyUI (its own host: the shared one has run prompts): every
feature the pack registers is green (installed, working, no error) or deliberately off (an automatic mode
whose setting is off by default), none red or amber. The expected states are written out by hand: a feature
added later must be placed here too."""
import pytest

GREEN = {"installed": True, "working": True, "last_error": None}
OFF = dict(GREEN, enabled=False)

# What a person expects of a fresh host, nothing queued yet, settings untouched.
EXPECTED = {
    "auto_unload.prepare_sampling": OFF,  # GPUGarden.AutoUnloadTextEncoders defaults to off
    "budget.push": GREEN,
    "estimate.workflow_route": GREEN,  # the route is in place; it was amber (working=false) before any use
    "fit_guard.prepare_sampling": OFF,  # GPUGarden.FitToCard defaults to off
    "oom_capture.execute": GREEN,
    "oom_capture.execute_async": GREEN,
    "oom_capture.handle_execution_error": GREEN,
    "oom_capture.store": GREEN,  # the store's folder is writable; it was red until the first OOM report
    "oom_capture.unload_all_models": GREEN,
    "recorder.hooks": GREEN,
}


@pytest.fixture(scope="module")
def fresh_host(tmp_path_factory):
    from support.comfy_host import ComfyHost, host_unavailable_reason

    reason = host_unavailable_reason()
    if reason:
        pytest.skip(reason)
    host = ComfyHost(tmp_path_factory.mktemp("comfy_fresh"))
    host.start()
    try:
        yield host
    finally:
        host.stop()


def _state(entry: dict) -> str:
    """The sidebar's colour, as web/health.js computes it."""
    if not entry["installed"]:
        return "red"
    if not entry["working"] or entry["last_error"]:
        return "amber"
    return "off" if entry.get("enabled") is False else "green"


def test_fresh_host_every_feature_green_or_off(fresh_host):
    features = fresh_host.get("/gpu_garden/health")["features"]
    assert sorted(features) == sorted(EXPECTED), "a feature was added or lost: place it in EXPECTED"
    for name, want in EXPECTED.items():
        got = {k: features[name].get(k) for k in want}
        assert got == want, (name, features[name])
    states = {name: _state(e) for name, e in features.items()}
    assert [n for n, s in states.items() if s in ("red", "amber")] == [], states
    for name in ("auto_unload.prepare_sampling", "fit_guard.prepare_sampling"):
        note = features[name]["note"]
        assert "automatic mode off" in note and "GPUGarden." in note, note
    # features that no setting switches carry no enabled/note keys (the documented shape, plus the sidebar's title)
    assert set(features["budget.push"]) == {"installed", "working", "last_error", "title"}
    # every feature is named by what it does (nodes/health.py TITLES: the page has no table of its own)
    assert [n for n, e in features.items() if not e.get("title")] == [], features


def test_switching_an_automatic_mode_on_shows_it_enabled(fresh_host):
    fresh_host.post("/settings/GPUGarden.FitToCard", True)
    try:
        entry = fresh_host.get("/gpu_garden/health")["features"]["fit_guard.prepare_sampling"]
        assert entry["enabled"] is True and _state(entry) == "green", entry
        assert "automatic mode on" in entry["note"], entry
    finally:
        fresh_host.post("/settings/GPUGarden.FitToCard", False)
    entry = fresh_host.get("/gpu_garden/health")["features"]["fit_guard.prepare_sampling"]
    assert entry["enabled"] is False, entry
