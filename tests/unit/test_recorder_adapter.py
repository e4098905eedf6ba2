"""The recorder's ComfyUI-side state machine and meter, driven without ComfyUI: nested nodes get the whole
window's peak, models loaded/unloaded are diffed, a failed node is closed at the run's end, the CUDA path
syncs at most once per node and resets the peak at every boundary, the watchdog warns once."""
import json
import sys
import types

import pytest

from gpu_garden.nodes import recorder, recorder_watchdog
from gpu_garden.nodes.recorder_meter import Meter, Sampler
from gpu_garden.memory.recorder import watchdog

MiB = 1024 ** 2


class FakeMeter:
    key, kind = "cuda:0", "cuda"

    def __init__(self):
        self.current = 0  # what the next take_peaks reports
        self.syncs = 0
        self.free_value = 1000
        self.active = False

    def take_peaks(self):
        p = self.current
        return {"cuda:0": p}, {"cuda:0": p + 1}

    def sync(self):
        self.syncs += 1

    def begin(self):
        self.active = True

    def idle(self):
        self.active = False

    def free(self):
        return {"cuda:0": self.free_value}

    def device_free_total(self):
        return self.free_value, 10_000


class Model:
    def __init__(self, name):
        self.name = name


def make(models):
    clock = iter(range(0, 10_000)).__next__
    return recorder.Recorder(FakeMeter(), loaded=lambda: list(models),
                             model_info=lambda m: {"name": m.name, "dtype": "float16"}, clock=lambda: float(clock()))


def test_nested_node_gets_the_peak_of_its_whole_window():
    models = []
    rec = make(models)
    rec.begin_run("p", {"1": {"class_type": "Outer", "inputs": {}}})
    rec.node_start("1", "Outer")
    rec.meter.current = 500
    rec.node_start("1:2", "Inner")  # the 500 seen so far belongs to Outer only
    rec.meter.current = 300
    rec.node_finish("1:2")
    rec.meter.current = 100
    rec.node_finish("1")
    run = rec.end_run("success", [])
    by = {n["id"]: n for n in run["nodes"]}
    assert by["1:2"]["peak"] == {"cuda:0": 300} and by["1"]["peak"] == {"cuda:0": 500}
    assert by["1"]["reserved_peak"] == {"cuda:0": 501}
    assert by["1"]["t0_s"] < by["1:2"]["t0_s"] and by["1"]["duration_s"] > by["1:2"]["duration_s"]
    assert rec.meter.syncs == 2  # one per node, at its end


def test_models_loaded_and_unloaded_during_a_node():
    clip, unet = Model("SD1ClipModel"), Model("SD15 (BaseModel)")
    models = [clip]
    rec = make(models)
    rec.begin_run("p", {})
    rec.node_start("3", "KSampler")
    models[:] = [unet]
    rec.node_finish("3")
    run = rec.end_run("success", [])
    (n,) = run["nodes"]
    assert n["models_loaded"] == ["SD15 (BaseModel)"] and n["models_unloaded"] == ["SD1ClipModel"]
    assert {m["name"] for m in run["models"]} == {"SD1ClipModel", "SD15 (BaseModel)"}


def test_cached_finish_and_lazy_restart_are_ignored_failed_node_closed_at_end():
    rec = make([])
    rec.begin_run("p", {})
    rec.node_finish("4")  # cached: finish without start
    rec.node_start("3", "KSampler")
    first = rec.open["3"]["t"]
    rec.node_start("3", "KSampler")  # lazy node staged again
    assert rec.open["3"]["t"] == first
    rec.node_start("8", "VAEDecode")
    msgs = [("execution_cached", {"nodes": ["4"]}),
            ("execution_error", {"node_id": "8", "node_type": "VAEDecode", "exception_type": "torch.OutOfMemoryError"})]
    run = rec.end_run("error", msgs)
    assert run["status"] == "error" and run["cached"] == ["4"] and run["error"]["node_id"] == "8"
    st = {n["id"]: n["status"] for n in run["nodes"]}
    assert st == {"8": "error", "3": "error"} and not rec.meter.active
    assert rec.run is None and rec.end_run("success", []) is None
    rec.node_start("9", "SaveImage")  # after the run: ignored
    assert rec.open == {}


def fake_torch(log):
    cuda = types.SimpleNamespace(
        max_memory_allocated=lambda d: (log.append("alloc"), 7 * MiB)[1],
        max_memory_reserved=lambda d: (log.append("reserved"), 9 * MiB)[1],
        reset_peak_memory_stats=lambda d: log.append("reset"),
        synchronize=lambda d: log.append("sync"),
        mem_get_info=lambda d: (3 * MiB, 12 * MiB),
        current_device=lambda: 0)
    return types.SimpleNamespace(cuda=cuda)


def test_cuda_meter_reads_then_resets_and_syncs_once_per_node():
    log = []
    meter = Meter(fake_torch(log), types.SimpleNamespace(type="cuda", index=1))
    assert meter.key == "cuda:1"
    rec = recorder.Recorder(meter)
    rec.begin_run("p", {})
    log.clear()
    rec.node_start("1", "A")
    rec.node_finish("1")
    assert log == ["alloc", "reserved", "reset", "sync", "alloc", "reserved", "reset"]
    (n,) = rec.end_run("success", [])["nodes"]
    assert n["peak"]["cuda:1"] == 7 * MiB and n["reserved_peak"]["cuda:1"] == 9 * MiB
    assert n["peak"]["cpu"] > 0 and n["free_before"]["cuda:1"] == 3 * MiB and n["free_before"]["cpu"] > 0
    assert meter.device_free_total() == (3 * MiB, 12 * MiB)


def test_cpu_meter_peak_rss_is_sampled_while_a_node_runs():
    values = iter([100, 100, 250, 120, 120, 120] + [120] * 1000)
    s = Sampler(lambda: next(values), interval=0.001)
    assert s.take() == 100
    s.start()
    import time
    deadline = time.monotonic() + 2
    while s.samples < 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    s.stop()
    assert s.take() == 250  # the spike between the two boundaries
    assert s.take() == 120


class FakeServer:
    def __init__(self):
        self.sent = []

    def send_sync(self, event, data, sid=None):
        self.sent.append((event, data, sid))


def test_watchdog_tick_warns_once_with_snapshot_and_guide(monkeypatch):
    monkeypatch.setattr(recorder_watchdog, "_snapshot", lambda: {"devices": [{"device": "cuda:0", "total": 1}]})
    rec = make([])
    rec.begin_run("p9", {})
    rec.node_start("8", "VAEDecode", "8")
    started = rec.open["8"]["t"]
    rec.last_progress -= 100  # no progress for 100 s
    server = FakeServer()
    state = {"recorder": rec, "warned": set(), "server": server, "sid": "client-1",
             "durations": {("8", "VAEDecode"): 1.0}}
    cfg = dict(watchdog.DEFAULTS)
    assert recorder_watchdog.tick(state, cfg, now=started + 50) is None  # 50 s < 1 s + 60 s
    ev = recorder_watchdog.tick(state, cfg, now=started + 62)
    assert ev["reason"] == "stalled" and ev["node"] == {"id": "8", "type": "VAEDecode", "display_id": "8"}
    assert ev["guide"]["id"] == "hang-dynamic-vram" and ev["snapshot"]["devices"]
    assert server.sent == [("gpu_garden.recorder.watchdog", ev, "client-1")]
    assert recorder_watchdog.tick(state, cfg, now=started + 90) is None  # once per node per run
    assert rec.run["watchdog"][0]["reason"] == "stalled"


def test_watchdog_pinned_memory_needs_time():
    rec = make([])
    rec.begin_run("p", {})
    rec.node_start("3", "KSampler")
    rec.meter.free_value = 10  # 0.1 % free
    rec.last_progress -= 1000
    t = rec.open["3"]["t"]
    state = {"recorder": rec, "warned": set(), "server": None, "durations": {}}
    cfg = dict(watchdog.DEFAULTS)
    assert recorder_watchdog.tick(state, cfg, now=t + 40, guide={"id": "g"}) is None  # pinned from now on
    assert recorder_watchdog.tick(state, cfg, now=t + 55, guide={"id": "g"}) is None
    assert recorder_watchdog.tick(state, cfg, now=t + 61, guide={"id": "g"})["reason"] == "pinned"


def test_settings_can_be_forced_off_by_environment(monkeypatch):
    monkeypatch.setenv("GPU_GARDEN_RECORDER", "0")
    assert recorder.settings()["enabled"] is False
    monkeypatch.setenv("GPU_GARDEN_RECORDER", "1")
    assert recorder.settings()["enabled"] is True


def test_uninstall_removes_only_our_wrappers():
    mod = types.SimpleNamespace(reset_progress_state=lambda p, d: "orig")
    orig = mod.reset_progress_state

    class Queue:
        def task_done(self, item_id, history, status=None, process_item=None):
            return "done"
    q = Queue()
    server = types.SimpleNamespace(prompt_queue=q)
    recorder._installed.clear()
    recorder._patch("reset_progress_state", mod, "reset_progress_state", recorder._wrap_reset)
    recorder._patch("task_done", q, "task_done", recorder._wrap_task_done)
    assert mod.reset_progress_state is not orig and "task_done" in q.__dict__
    assert q.task_done(1, {}, None) == "done"  # the original still runs (our end-of-run hook finds no run)
    recorder.uninstall()
    assert mod.reset_progress_state is orig and "task_done" not in q.__dict__
    # someone wrapped over ours: uninstall leaves theirs in place
    recorder._patch("reset_progress_state", mod, "reset_progress_state", recorder._wrap_reset)
    theirs = lambda p, d: "theirs"  # noqa: E731
    mod.reset_progress_state = theirs
    recorder.uninstall()
    assert mod.reset_progress_state is theirs
    assert server.prompt_queue is q


def test_linux_fast_readers_agree_with_psutil():
    psutil = pytest.importorskip("psutil")
    import os
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("Linux /proc only")
    from gpu_garden.nodes.recorder_meter import _ProcReader
    r = _ProcReader()
    rss, ps_rss = r.rss(), psutil.Process().memory_info().rss
    assert abs(rss - ps_rss) <= 0.02 * ps_rss
    avail, ps_avail = r.available(), psutil.virtual_memory().available
    assert abs(avail - ps_avail) <= 0.05 * ps_avail + 64 * MiB


def test_start_hook_reinstalled_when_replaced_and_found_under_other_wrappers(monkeypatch):
    import functools
    mod = types.SimpleNamespace(reset_progress_state=lambda p, d: "orig")
    orig = mod.reset_progress_state
    recorder._installed.clear()
    recorder._patch("reset_progress_state", mod, "reset_progress_state", recorder._wrap_reset)
    ours = mod.reset_progress_state

    @functools.wraps(ours)
    def theirs(p, d):
        return ours(p, d)
    mod.reset_progress_state = theirs
    assert recorder._start_hook_in_place()  # wrapped by another pack: still ours underneath
    mod.reset_progress_state = orig  # another pack put the original back
    assert not recorder._start_hook_in_place()
    monkeypatch.setattr(recorder, "settings", lambda: {"enabled": True})
    recorder._on_run_end(None)
    assert recorder._start_hook_in_place() and mod.reset_progress_state is not orig
    recorder.uninstall()
    assert mod.reset_progress_state is orig


def test_watchdog_never_broadcasts_a_run_without_its_client(monkeypatch):
    """A run queued without a page (API script, sid None) keeps its warning in the record; nothing goes to
    every connected page (send_sync with sid None broadcasts)."""
    monkeypatch.setattr(recorder_watchdog, "_snapshot", lambda: {})
    rec = make([])
    rec.begin_run("p1", {})
    rec.node_start("8", "VAEDecode", "8")
    rec.last_progress -= 100
    server = FakeServer()
    state = {"recorder": rec, "warned": set(), "server": server, "sid": None, "durations": {("8", "VAEDecode"): 1.0}}
    ev = recorder_watchdog.tick(state, dict(watchdog.DEFAULTS), now=rec.open["8"]["t"] + 62)
    assert ev is not None and rec.run["watchdog"] and server.sent == []


def test_innermost_survives_the_worker_changing_open_nodes():
    rec = make([])
    rec.begin_run("p2", {})

    class Flaky(dict):
        calls = 0

        def items(self):
            Flaky.calls += 1
            if Flaky.calls == 1:
                raise RuntimeError("dictionary changed size during iteration")
            return super().items()

    rec.open = Flaky({"3": {"t": 1.0}, "9": {"t": 2.0}})
    assert rec.innermost() == ("9", {"t": 2.0})


def test_settings_saved_whole_and_read_back(monkeypatch, tmp_path):
    from gpu_garden.nodes import recorder_state

    monkeypatch.setattr(recorder_state, "_user_dir", lambda: str(tmp_path / "gpu_garden"))
    monkeypatch.setattr(recorder_state, "_settings", dict(recorder_state.DEFAULT_SETTINGS))
    recorder_state.update_settings({"enabled": False, "report_detail": "full"})
    saved = tmp_path / "gpu_garden" / "recorder_settings.json"
    assert json.loads(saved.read_text()) == {"enabled": False, "report_detail": "full"}
    assert [p.name for p in saved.parent.iterdir()] == ["recorder_settings.json"]  # no temp file left behind
    monkeypatch.setattr(recorder_state, "_settings", dict(recorder_state.DEFAULT_SETTINGS))
    recorder_state._load_settings()
    assert recorder_state.settings()["enabled"] is False and recorder_state.settings()["report_detail"] == "full"


def test_settings_take_only_valid_values(monkeypatch, tmp_path):
    """POST /gpu_garden/recorder/settings {"enabled": "false"} must not switch recording on (bool("false") is True):
    a wrong value is refused whole and nothing changes; a hand-edited file with one is ignored at start."""
    from gpu_garden.nodes import recorder_state

    monkeypatch.setattr(recorder_state, "_user_dir", lambda: str(tmp_path / "gpu_garden"))
    monkeypatch.setattr(recorder_state, "_settings", {"enabled": False, "report_detail": "redacted"})
    for bad in ({"enabled": "false"}, {"enabled": 1}, {"enabled": True, "report_detail": "everything"}, ["enabled"]):
        with pytest.raises(ValueError):
            recorder_state.update_settings(bad)
        assert recorder_state.settings()["enabled"] is False and recorder_state.settings()["report_detail"] == "redacted"
    (tmp_path / "gpu_garden").mkdir()
    (tmp_path / "gpu_garden" / "recorder_settings.json").write_text('{"enabled": "no", "report_detail": "full"}')
    recorder_state._load_settings()
    assert recorder_state.settings() == {"enabled": False, "report_detail": "redacted"}


def test_progress_handler_takes_whatever_the_registry_passes(monkeypatch):
    """ComfyUI's ProgressRegistry calls our handler without a try (update_handler on every sampler step): a host
    that passes one more argument (or a keyword) must not fail the run."""
    import types as _types

    from gpu_garden.nodes import recorder

    class ProgressHandler:
        def __init__(self, name):
            self.name, self.enabled = name, True

    progress = _types.ModuleType("comfy_execution.progress")
    progress.ProgressHandler = ProgressHandler
    pkg = _types.ModuleType("comfy_execution")
    pkg.progress = progress
    monkeypatch.setitem(sys.modules, "comfy_execution", pkg)
    monkeypatch.setitem(sys.modules, "comfy_execution.progress", progress)
    monkeypatch.setattr(recorder, "_handler_cls", None)
    monkeypatch.setitem(recorder._state, "recorder", None)
    h = recorder._handler_class()()
    h.set_registry(None)
    h.start_handler("3", {"state": "running"}, "p-1", "a newer argument")
    h.update_handler("3", 1, 20, {"state": "running"}, "p-1", None, "a newer argument", extra=True)
    h.finish_handler("3", {"state": "finished"}, "p-1", "a newer argument")


def test_watchdog_warning_raised_as_the_run_ends_is_in_the_stored_run(monkeypatch):
    """The run ends (and is serialized for the store) while the tick reads its slow snapshot: the warning the
    tick decided on is in the stored run, and a tick that finds the run ended appends to nothing."""
    rec = make([])
    rec.begin_run("p5", {})
    rec.node_start("8", "VAEDecode", "8")
    rec.last_progress -= 100
    stored = []

    def snapshot_while_the_run_ends():
        stored.append(json.loads(json.dumps(rec.end_run("success", []))))
        return {}

    monkeypatch.setattr(recorder_watchdog, "_snapshot", snapshot_while_the_run_ends)
    state = {"recorder": rec, "warned": set(), "server": None, "durations": {("8", "VAEDecode"): 1.0}}
    ev = recorder_watchdog.tick(state, dict(watchdog.DEFAULTS), now=rec.open["8"]["t"] + 62)
    assert ev is not None and [w["reason"] for w in stored[0]["watchdog"]] == ["stalled"]
    assert recorder_watchdog.tick(state, dict(watchdog.DEFAULTS), now=10_000) is None
