"""The live budget against a real ComfyUI (--cpu): the route, the VRAM Budget node, the websocket push."""
import json
import time
import urllib.error

import pytest
from support.comfy_host import sd15_prompt

NUMBERS = ("total", "free", "torch_allocated", "torch_reserved", "reserved_unallocated", "this_process_other",
           "other_processes")


def check_snapshot(snap):
    assert set(snap) >= {"devices", "host_ram", "sampled_at"}
    assert snap["devices"], snap
    for d in snap["devices"]:
        assert set(d) >= {"index", "name", "backend", "models", "notes", *NUMBERS}
        for k in NUMBERS:
            assert d[k] is None or (isinstance(d[k], int) and d[k] >= 0)
    assert snap["host_ram"]["total"] > 0 and 0 < snap["host_ram"]["available"] <= snap["host_ram"]["total"]
    assert abs(time.time() - snap["sampled_at"]) < 120


def test_route_returns_snapshot_of_the_cpu_host(comfy_host):
    snap = comfy_host.get("/gpu_garden/budget")
    check_snapshot(snap)
    cpu = snap["devices"][0]
    assert cpu["backend"] == "cpu" and cpu["device"] == "cpu"
    assert cpu["total"] == snap["host_ram"]["total"]
    assert cpu["this_process_other"] > 0  # ComfyUI's own resident memory
    check_snapshot(comfy_host.get("/api/gpu_garden/budget"))  # the frontend's api.fetchApi prefix


def test_snapshot_lists_the_checkpoint_after_a_workflow_loads_it(comfy_host):
    entry = comfy_host.run(sd15_prompt(seed=11))
    assert entry["status"]["status_str"] == "success", entry["status"]
    snap = comfy_host.get("/gpu_garden/budget")
    models = snap["devices"][0]["models"]
    names = [m["name"] for m in models]
    assert any("SD15" in n or "BaseModel" in n for n in names), names
    unet = next(m for m in models if "SD15" in m["name"] or "BaseModel" in m["name"])
    assert unet["bytes"] > 0 and unet["partial"] is False and unet["bytes"] <= unet["total_bytes"]


def test_budget_node_passes_through_and_records_the_snapshot(comfy_host):
    extra = {"10": {"class_type": "GPUGardenVRAMBudget", "inputs": {"value": ["8", 0]}},
             "11": {"class_type": "GPUGardenVRAMBudget", "inputs": {}}}  # unconnected: runs as an output node
    prompt = sd15_prompt(seed=12, extra=extra)
    prompt["9"]["inputs"]["images"] = ["10", 0]  # SaveImage gets the image through the budget node
    entry = comfy_host.run(prompt)
    assert entry["status"]["status_str"] == "success", entry["status"]
    out = entry["outputs"]
    assert "images" in out["9"]  # the passthrough delivered the IMAGE
    for node_id in ("10", "11"):
        (snap,) = out[node_id]["gpu_garden_budget"]
        check_snapshot(snap)
        assert snap["recorded"] is True
    names = [m["name"] for m in out["10"]["gpu_garden_budget"][0]["devices"][0]["models"]]
    assert any("SD15" in n or "BaseModel" in n for n in names), names


def test_budget_outputs_feed_downstream_nodes(comfy_host):
    info = comfy_host.get("/object_info/GPUGardenVRAMBudget")["GPUGardenVRAMBudget"]
    assert info["output"] == ["*", "INT", "GPU_GARDEN_BUDGET"] and info["output_node"] is True
    assert info["category"] == "GPU Garden"
    # free bytes as a real INT input of a core node: the latent width would fail validation if it were not an int
    prompt = {"1": {"class_type": "GPUGardenVRAMBudget", "inputs": {}},
              "2": {"class_type": "PrimitiveInt", "inputs": {"value": ["1", 1]}}}
    entry = comfy_host.run(prompt)
    assert entry["status"]["status_str"] == "success", entry["status"]


def browser_socket(comfy_host):
    """A websocket that opens the way the frontend does: with its feature_flags message first."""
    ws = comfy_host.websocket()
    ws.send(json.dumps({"type": "feature_flags", "data": {"supports_preview_metadata": True}}))
    return ws


def test_websocket_pushes_while_a_browser_is_connected(comfy_host):
    ws = browser_socket(comfy_host)
    try:
        t0 = time.monotonic()
        msgs = comfy_host.collect_events(ws, lambda m: m.get("type") == "gpu_garden.budget", timeout=10)
        check_snapshot(msgs[-1]["data"])
        assert time.monotonic() - t0 < 5
        # a page can ask for a faster push; the fastest connected page wins
        r = comfy_host.post("/gpu_garden/budget/interval", {"client_id": ws.client_id, "ms": 250})
        assert r == {"ms": 250, "push_ms": 250, "event": "gpu_garden.budget"}
        comfy_host.collect_events(ws, lambda m: m.get("type") == "gpu_garden.budget", timeout=10)
        stamps, t0 = [], time.monotonic()
        while len(stamps) < 4:
            comfy_host.collect_events(ws, lambda m: m.get("type") == "gpu_garden.budget", timeout=10)
            stamps.append(time.monotonic())
        assert (stamps[-1] - t0) / len(stamps) < 0.9, stamps  # clearly faster than the 1 s default
        assert comfy_host.post("/gpu_garden/budget/interval", {"client_id": ws.client_id, "ms": 1})["ms"] == 250
    finally:
        ws.close()


def test_pushes_keep_coming_while_a_prompt_runs(comfy_host):
    """The bar must move during a run, not only between runs: budget events arrive between the prompt's
    execution_start and its end, and the ones sent during sampling list the diffusion model."""
    from support.comfy_host import sd15_prompt

    ws = browser_socket(comfy_host)
    try:
        comfy_host.post("/gpu_garden/budget/interval", {"client_id": ws.client_id, "ms": 250})
        prompt_id = comfy_host.queue(sd15_prompt("during " + str(time.monotonic()), width=192, height=192, steps=4),
                                     client_id=ws.client_id)
        msgs = comfy_host.collect_events(ws, lambda m: m.get("type") == "execution_start"
                                         and m["data"].get("prompt_id") == prompt_id, timeout=120)
        msgs = comfy_host.collect_events(ws, lambda m: m.get("type") == "executing" and m["data"].get("node") is None
                                         and m["data"].get("prompt_id") == prompt_id, timeout=300)
        during = [m["data"] for m in msgs if m.get("type") == "gpu_garden.budget"]
        assert len(during) >= 2, [m.get("type") for m in msgs]
        names = {mod["name"] for snap in during for dev in snap["devices"] for mod in dev["models"]}
        assert any("BaseModel" in n for n in names), names
    finally:
        ws.close()
        comfy_host.wait_idle()


def test_api_scripts_on_the_websocket_get_no_budget_traffic(comfy_host):
    ws = comfy_host.websocket()  # no feature_flags: a script, not the frontend
    ws.settimeout(0.5)
    try:
        types, deadline = [], time.monotonic() + 3
        while time.monotonic() < deadline:
            try:
                raw = ws.recv()
            except Exception:
                continue
            if isinstance(raw, str):
                types.append(json.loads(raw).get("type"))
        assert "gpu_garden.budget" not in types, types
    finally:
        ws.close()


def test_interval_route_rejects_bad_input(comfy_host):
    with pytest.raises(urllib.error.HTTPError) as e:
        comfy_host.post("/gpu_garden/budget/interval", {"ms": "fast"})
    assert e.value.code == 400


def test_no_errors_from_the_pack_in_the_log(comfy_host):
    log = comfy_host.log_text()
    assert "budget push failed" not in log
    assert "[GPU Garden] budget" not in log and "budget_routes setup failed" not in log


def test_interval_route_accepts_only_connected_client_ids(comfy_host):
    with pytest.raises(urllib.error.HTTPError) as e:
        comfy_host.post("/gpu_garden/budget/interval", {"client_id": "nobody-connected-" + str(time.monotonic()), "ms": 500})
    assert e.value.code == 404
    # a page whose socket has not told it its id yet: applied locally, nothing stored
    assert comfy_host.post("/gpu_garden/budget/interval", {"client_id": "", "ms": 500})["ms"] == 500


def test_budget_node_runs_again_on_every_queue(comfy_host):
    """Nothing upstream changes between the two runs; ComfyUI would serve a cached node, and a stale
    snapshot would feed the verdict. fingerprint_inputs makes it sample again."""
    prompt = {"1": {"class_type": "GPUGardenVRAMBudget", "inputs": {}}}
    first = comfy_host.run(prompt)["outputs"]["1"]["gpu_garden_budget"][0]
    time.sleep(0.05)
    second_entry = comfy_host.run(prompt)
    assert second_entry["status"]["status_str"] == "success"
    second = second_entry["outputs"]["1"]["gpu_garden_budget"][0]
    assert second["sampled_at"] > first["sampled_at"]
