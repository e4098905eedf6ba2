"""The flight recorder on a real --cpu ComfyUI: a real SD1.5 run gives one record per executed node with a
duration and a nonzero peak; versions are present; the memory report leaves out the temp base directory
and the prompt text; compare names what changed; the setting turns recording off; the watchdog warns
about a node that runs far past its recorded duration without progress.

This module starts its own host (the watchdog's thresholds are read from the environment at start), with
thresholds low enough that VAE Decode at 512 px on a CPU trips it after a 64 px run."""
import json
import time
import urllib.error
import uuid

import pytest

from support.comfy_host import ComfyHost, host_unavailable_reason, sd15_prompt

WATCHDOG_ENV = {"GPU_GARDEN_WATCHDOG_FACTOR": "1.5", "GPU_GARDEN_WATCHDOG_MIN_EXTRA_S": "0.3",
                "GPU_GARDEN_WATCHDOG_STALL_S": "0.4", "GPU_GARDEN_WATCHDOG_INTERVAL_S": "0.1",
                "GPU_GARDEN_WATCHDOG_PINNED_S": "100000"}
REQUIRED_NODE_KEYS = {"id", "type", "duration_s", "peak", "free_before", "free_after", "models_loaded", "models_unloaded"}


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    reason = host_unavailable_reason()
    if reason:
        pytest.skip(reason)
    mp = pytest.MonkeyPatch()
    for k, v in WATCHDOG_ENV.items():
        mp.setenv(k, v)
    h = ComfyHost(tmp_path_factory.mktemp("comfy_rec"))
    try:
        h.start()
    finally:
        mp.undo()
    yield h
    h.stop()


def wait_run(host, prompt_id, timeout=60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for run in host.get("/gpu_garden/runs?limit=20")["runs"]:
            if run["prompt_id"] == prompt_id:
                return run
        time.sleep(0.2)
    raise AssertionError(f"run {prompt_id} not recorded:\n{host.log_tail()}")


def secret() -> str:
    return "violet teapot " + uuid.uuid4().hex


def test_sd15_run_is_recorded_node_by_node(host):
    text = secret()
    prompt = sd15_prompt(text, seed=1)
    pid = host.queue(prompt)
    entry = host.wait(pid)
    assert entry["status"]["status_str"] == "success", entry["status"]
    run = wait_run(host, pid)
    assert set(run) >= {"prompt_id", "status", "started", "ended", "versions", "devices", "nodes"}
    assert run["status"] == "success" and run["ended"] >= run["started"]
    cached = set([m[1]["nodes"] for m in entry["status"]["messages"] if m[0] == "execution_cached"][0])
    assert cached == set(run["cached"])
    ids = [n["id"] for n in run["nodes"]]
    assert sorted(ids) == sorted(set(prompt) - cached), ids  # one record per executed node
    assert set(prompt) - cached == set(prompt)  # a fresh host: every node ran
    for n in run["nodes"]:
        assert set(n) >= REQUIRED_NODE_KEYS
        assert n["type"] == prompt[n["id"]]["class_type"]
        assert n["duration_s"] > 0
        assert n["peak"]["cpu"] > 100 * 2 ** 20, n  # ComfyUI's resident memory: far above 100 MiB
        assert n["free_before"]["cpu"] > 0 and n["free_after"]["cpu"] > 0
    by_id = {n["id"]: n for n in run["nodes"]}
    assert any("BaseModel" in m or "SD15" in m for m in by_id["3"]["models_loaded"]), by_id["3"]
    loaded = [m for n in run["nodes"] for m in n["models_loaded"]]
    assert any("Clip" in m for m in loaded) and any("AutoencoderKL" in m for m in by_id["8"]["models_loaded"]), loaded
    assert by_id["3"]["peak"]["cpu"] >= by_id["5"]["peak"]["cpu"] * 0.5
    t0s = [n["t0_s"] for n in run["nodes"]]
    assert t0s == sorted(t0s)
    v = run["versions"]
    assert v["comfyui"].startswith("0.8.0") and v["torch"] and v["python"] and v["os"] and v["gpu_garden"]
    assert "gpu_garden_test_nodes" in v["custom_nodes"]
    assert [d["device"] for d in run["devices"]] == ["cpu"] and run["devices"][0]["total"] > 0
    assert "--cpu" in run["args"]
    assert run["model_files"] == ["gg_sd15.safetensors"]
    assert run["latent"] == {"width": 64, "height": 64, "frames": 1, "batch": 1}
    assert any(m.get("dtype") for m in run["models"])
    assert run["recorder_overhead_s"] < 0.05 * run["duration_s"]

    md = host.get(f"/gpu_garden/runs/{pid}/report.md").decode()
    rep = host.get(f"/gpu_garden/runs/{pid}/report.json")
    raw_store = (host.base / "user" / "gpu_garden" / "runs.jsonl").read_text()
    for blob in (md, json.dumps(rep), raw_store):
        assert text not in blob  # the prompt text is never recorded
    for blob in (md, json.dumps(rep)):
        assert str(host.base) not in blob and str(host.base.resolve()) not in blob  # no absolute paths
    assert str(host.base) in raw_store  # (the store itself keeps the launch arguments as given)
    assert "| 3 | KSampler |" in md and "comfyui: 0.8.0" in md and "gg_sd15.safetensors" in md
    assert rep["redacted"] is True and rep["prompt_id"] == pid and len(rep["nodes"]) == len(run["nodes"])
    assert "<path>" in " ".join(rep["args"])
    health = host.get("/gpu_garden/health")["features"]
    assert health["recorder.hooks"] == {"installed": True, "working": True, "last_error": None,
                                        "title": "Flight recorder: node timing and memory"}
    assert health["recorder.store"]["working"] is True


def test_routes_validate_and_order_newest_first(host):
    first = host.queue(sd15_prompt(secret(), seed=2))
    host.wait(first)
    second = host.queue(sd15_prompt(secret(), seed=3))
    host.wait(second)
    wait_run(host, second)
    runs = host.get("/gpu_garden/runs?limit=2")["runs"]
    assert [r["prompt_id"] for r in runs] == [second, first]
    assert len(host.get("/api/gpu_garden/runs?limit=1")["runs"]) == 1
    with pytest.raises(urllib.error.HTTPError) as e:
        host.get("/gpu_garden/runs?limit=x")
    assert e.value.code == 400
    with pytest.raises(urllib.error.HTTPError) as e:
        host.get("/gpu_garden/runs/nope/report.md")
    assert e.value.code == 404
    full = host.get(f"/gpu_garden/runs/{second}/report.json?detail=full")
    assert full["redacted"] is False and str(host.base) in " ".join(full["args"])


def test_measured_route_matches_model_files_and_size(host):
    pid = host.queue(sd15_prompt(secret(), width=64, height=64, seed=7))
    host.wait(pid)
    run = wait_run(host, pid)
    got = host.get("/gpu_garden/runs/measured?model=checkpoints/gg_sd15.safetensors&width=64&height=64")["measured"]
    assert got["label"] == "measured here" and got["runs"] >= 1
    assert got["peak"]["cpu"] >= max(n["peak"]["cpu"] for n in run["nodes"])
    assert host.get("/gpu_garden/runs/measured?model=gg_sd15.safetensors&width=1024&height=1024")["measured"] is None
    with pytest.raises(urllib.error.HTTPError) as e:
        host.get("/gpu_garden/runs/measured?width=64&height=64")
    assert e.value.code == 400


def test_oom_run_carries_the_oom_report_id(host):
    prompt = {"5": {"class_type": "EmptyLatentImage", "inputs": {"width": 64, "height": 64, "batch_size": 1}},
              "10": {"class_type": "GGTestRaiseOOM", "inputs": {"samples": ["5", 0], "kind": "cuda_caching",
                                                                "extra": " " + uuid.uuid4().hex}},
              "11": {"class_type": "SaveLatent", "inputs": {"samples": ["10", 0], "filename_prefix": "gg_rec/latent"}}}
    pid = host.queue(prompt)
    assert host.wait(pid)["status"]["status_str"] == "error"
    run = wait_run(host, pid)
    assert run["status"] == "error" and run["error"]["node_id"] == "10"
    assert run["error"]["exception_type"] == "torch.OutOfMemoryError"
    failed = next(n for n in run["nodes"] if n["id"] == "10")
    assert failed["status"] == "error" and failed["peak"]["cpu"] > 0
    oom = host.get("/gpu_garden/oom/reports?limit=5")["reports"]
    assert run["oom_report_id"] == next(r["id"] for r in oom if r["prompt_id"] == pid)
    rep = host.get(f"/gpu_garden/runs/{pid}/report.json")
    assert rep["oom"]["id"] == run["oom_report_id"] and rep["oom"]["exception_type"] == "torch.OutOfMemoryError"
    assert "**Out-of-memory report**" in host.get(f"/gpu_garden/runs/{pid}/report.md").decode()


def test_compare_names_the_latent_change_and_slower_nodes(host):
    a = host.queue(sd15_prompt(secret(), width=64, height=64, seed=4))
    host.wait(a)
    b = host.queue(sd15_prompt(secret(), width=256, height=256, seed=4))
    host.wait(b)
    wait_run(host, b)
    c = host.get(f"/gpu_garden/runs/{b}/compare")
    assert c["previous"] == a and c["current"] == b
    assert c["changed"]["latent"] == {"before": {"width": 64, "height": 64, "frames": 1, "batch": 1},
                                      "after": {"width": 256, "height": 256, "frames": 1, "batch": 1}}
    slower = {(n["id"], n["what"]) for n in c["nodes"]}
    assert ("8", "time") in slower, c  # VAE Decode at 16x the pixels
    md = host.get(f"/gpu_garden/runs/{b}/report.md").decode()
    assert f"Compared with the previous run** `{a}`" in md and "latent:" in md


def test_setting_turns_recording_off(host):
    assert host.post("/gpu_garden/recorder/settings", {"enabled": False})["enabled"] is False
    try:
        pid = host.queue(sd15_prompt(secret(), seed=5))
        host.wait(pid)
        time.sleep(1.0)
        assert pid not in [r["prompt_id"] for r in host.get("/gpu_garden/runs?limit=50")["runs"]]
    finally:
        assert host.post("/gpu_garden/recorder/settings", {"enabled": True})["enabled"] is True
    assert host.get("/gpu_garden/recorder/settings") == {"enabled": True, "report_detail": "redacted"}


def test_settings_route_refuses_a_wrong_value(host):
    host.post("/gpu_garden/recorder/settings", {"enabled": False})
    try:
        with pytest.raises(urllib.error.HTTPError) as e:
            host.post("/gpu_garden/recorder/settings", {"enabled": "false"})
        assert e.value.code == 400
        assert host.get("/gpu_garden/recorder/settings")["enabled"] is False  # "false" did not switch it on
    finally:
        host.post("/gpu_garden/recorder/settings", {"enabled": True})


def test_watchdog_warns_about_a_node_far_past_its_recorded_time(host):
    ws = host.websocket()
    try:
        small = host.queue(sd15_prompt(secret(), seed=6), client_id=ws.client_id)
        host.wait(small)
        wait_run(host, small)  # its VAE Decode time is now the recorded duration
        big = host.queue(sd15_prompt(secret(), width=512, height=512, seed=6), client_id=ws.client_id)
        msgs = host.collect_events(ws, lambda m: m.get("type") == "gpu_garden.recorder.watchdog"
                                   and m["data"]["node"]["id"] == "8", timeout=240)
        host.wait(big)
    finally:
        ws.close()
    ev = msgs[-1]["data"]
    assert ev["prompt_id"] == big and ev["reason"] == "stalled" and ev["node"]["type"] == "VAEDecode"
    assert ev["elapsed_s"] > ev["expected_s"] and ev["since_progress_s"] >= 0.4
    assert ev["guide"]["id"] == "hang-dynamic-vram" and "--disable-dynamic-vram" in ev["guide"]["markdown"]
    assert ev["snapshot"]["devices"] and ev["snapshot"]["devices"][0]["total"] > 0
    run = wait_run(host, big)
    assert any(w["node"]["id"] == "8" and w["reason"] == "stalled" for w in run["watchdog"])
    assert "Watchdog:" in host.get(f"/gpu_garden/runs/{big}/report.md").decode()
    run_events = [m for m in msgs if m.get("type") == "gpu_garden.recorder.run"]
    assert any(m["data"]["prompt_id"] == small for m in run_events)  # the badge event reached the queuing client
