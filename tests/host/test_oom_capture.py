"""OOM capture in a real --cpu ComfyUI: GGTestRaiseOOM (tests/host/test_nodes) raises the runtimes' own
messages after EmptyLatentImage; the report must reach the browser that queued the run, after ComfyUI's
own execution_error, and stay readable on the route (also after a restart)."""
import time

import pytest

from gpu_garden.nodes import oom_report

ROUTE = "/gpu_garden/oom/reports"
EVENT_TYPE = "gpu_garden.oom"
CAUSES = {"fragmentation", "weights-exceed-vram", "activations", "vae-decode", "text-encoder", "other-process",
          "kv-cache", "host-ram", "leak", "other"}


def oom_prompt(kind="cuda_caching", extra="", width=512, height=512):
    return {
        "5": {"class_type": "EmptyLatentImage", "inputs": {"width": width, "height": height, "batch_size": 1}},
        "10": {"class_type": "GGTestRaiseOOM", "inputs": {"samples": ["5", 0], "kind": kind, "extra": extra}},
        "11": {"class_type": "SaveLatent", "inputs": {"samples": ["10", 0], "filename_prefix": "gg_oom/latent"}},
    }


def run_and_collect(host, prompt, extra_data=None, quiet_s=1.5):
    """Queue from a fresh websocket client; return all messages until the run ended plus a quiet period."""
    ws = host.websocket()
    try:
        body = {"prompt": prompt, "client_id": ws.client_id}
        if extra_data:
            body["extra_data"] = extra_data
        prompt_id = host.post("/prompt", body)["prompt_id"]
        ended = lambda m: m.get("type") in ("execution_error", "execution_success") and \
            (m.get("data") or {}).get("prompt_id") == prompt_id
        msgs = host.collect_events(ws, ended, timeout=120)
        deadline = time.monotonic() + quiet_s
        ws.settimeout(0.3)
        while time.monotonic() < deadline:
            try:
                msgs.extend(host.collect_events(ws, lambda m: m.get("type") == EVENT_TYPE, timeout=0.3))
                break
            except TimeoutError:
                continue
        return prompt_id, msgs
    finally:
        ws.close()



def oom_events(msgs, prompt_id):
    return [m["data"] for m in msgs if m.get("type") == EVENT_TYPE and m["data"].get("prompt_id") == prompt_id]


def triage_or_none():
    try:
        from gpu_garden.memory.triage import engine as triage
        return triage
    except ImportError:
        return None


def assert_triaged_like_core(report):
    triage = triage_or_none()
    if triage is None:
        assert any("triage core unavailable" in n for n in report["notes"])
        return
    ctx = {"node_type": report["node"]["type"], "node_title": report["node"]["title"], **report["host"],
           "snapshot": report["snapshot"], "loaded_models": report["loaded_models"], "latent": report["latent"],
           "model_family": report["model_family"], "previous_ooms": report["session_history"]}
    from gpu_garden.nodes.oom_capture import log_excerpt

    expected = triage.triage_text(log_excerpt(report["exception_type"], report["message"]), ctx)
    assert expected["found"], expected
    assert report["cause"] == expected["cause"] and report["cause"] in CAUSES
    assert report["guide"] and report["guide"]["id"] == expected["events"][-1]["guide"]["id"]
    assert report["guide"]["commands"], "the guide gives commands to copy"
    assert report["causes"] and report["causes"][0]["id"] == report["cause"]


def test_cuda_oom_event_reaches_the_queuing_browser_after_execution_error(comfy_host):
    prompt_id, msgs = run_and_collect(comfy_host, oom_prompt("cuda_caching"))
    types = [m.get("type") for m in msgs]
    assert "execution_error" in types, types  # ComfyUI's own event still arrives ...
    events = oom_events(msgs, prompt_id)
    assert len(events) == 1, types
    assert types.index("execution_error") < types.index(EVENT_TYPE)  # ... first, then ours beside it
    err = next(m["data"] for m in msgs if m.get("type") == "execution_error")
    assert err["exception_type"] == "torch.OutOfMemoryError" and "TIPS" in err["exception_message"]  # untouched

    r = events[0]
    assert r["node"] == {"id": "10", "type": "GGTestRaiseOOM", "title": "GG Test: raise OOM",
                         "path": [{"id": "10", "type": None, "title": None}]}
    assert r["exception_type"] == "torch.OutOfMemoryError"
    assert r["message"].startswith("CUDA out of memory. Tried to allocate 1.50 GiB.") and "TIPS" not in r["message"]
    assert r["captured"] == "before ComfyUI unloaded models"  # the snapshot predates ComfyUI's OOM cleanup
    assert r["latent"]["width"] == 512 and r["latent"]["height"] == 512 and r["latent"]["batch"] == 1
    assert r["latent"]["latent_shape"] == [1, 4, 64, 64]
    assert isinstance(r["loaded_models"], list)
    assert_triaged_like_core(r)
    if triage_or_none() is not None:  # numbers of the bar come from the log, exactly
        assert r["numbers"]["requested"] == 1536 * 2**20 and r["numbers"]["source"]["requested"] == "log"


@pytest.mark.parametrize("kind,needle", [("mps", "MPS backend out of memory"),
                                         ("cpu", "DefaultCPUAllocator: can't allocate memory"),
                                         ("cuda_async", "would exceed allowed memory")])
def test_runtime_error_forms_are_caught_too(comfy_host, kind, needle):
    prompt_id, msgs = run_and_collect(comfy_host, oom_prompt(kind))
    events = oom_events(msgs, prompt_id)
    assert len(events) == 1, [m.get("type") for m in msgs]
    r = events[0]
    assert needle in r["message"]
    if kind != "cuda_async":  # plain RuntimeError: ComfyUI neither adds its tip nor unloads
        assert r["exception_type"] == "RuntimeError"
        assert r["captured"] == "at failure"
    assert_triaged_like_core(r)


def test_non_oom_error_is_left_alone(comfy_host):
    prompt_id, msgs = run_and_collect(comfy_host, oom_prompt("not_oom"), quiet_s=2.0)
    assert "execution_error" in [m.get("type") for m in msgs]
    assert oom_events(msgs, prompt_id) == []
    assert all(r["prompt_id"] != prompt_id for r in comfy_host.get(ROUTE)["reports"])


def test_subgraph_node_title_from_the_workflow(comfy_host):
    sg = "5b1c9a3e-0000-4000-8000-00000000aa01"
    prompt = oom_prompt("cuda_caching")
    prompt["12:5"] = prompt.pop("10")
    prompt["11"]["inputs"]["samples"] = ["12:5", 0]
    workflow = {"nodes": [{"id": 12, "type": sg, "title": "Hi-res pass"}, {"id": 5, "type": "EmptyLatentImage"}],
                "definitions": {"subgraphs": [{"id": sg, "nodes": [{"id": 5, "type": "GGTestRaiseOOM",
                                                                    "title": "Decode big"}]}]}}
    prompt_id, msgs = run_and_collect(comfy_host, prompt, extra_data={"extra_pnginfo": {"workflow": workflow}})
    (r,) = oom_events(msgs, prompt_id)
    assert r["node"]["id"] == "12:5" and r["node"]["type"] == "GGTestRaiseOOM" and r["node"]["title"] == "Decode big"
    assert [p["title"] for p in r["node"]["path"]] == ["Hi-res pass", "Decode big"]


def test_api_client_without_browser_gets_the_report_on_the_route_only(comfy_host):
    bystander = comfy_host.websocket()
    try:
        prompt_id = comfy_host.queue(oom_prompt("cpu"))  # no client_id, as a script would
        entry = comfy_host.wait(prompt_id, timeout=120)
        assert entry["status"]["status_str"] == "error"
        assert any(m[0] == "execution_error" for m in entry["status"]["messages"])  # ComfyUI's history unchanged
        reports = [r for r in comfy_host.get(ROUTE)["reports"] if r["prompt_id"] == prompt_id]
        assert len(reports) == 1
        with pytest.raises(TimeoutError):  # nothing was broadcast to other browsers
            comfy_host.collect_events(bystander, lambda m: m.get("type") == EVENT_TYPE, timeout=1.5)
    finally:
        bystander.close()


def test_route_lists_newest_first_and_honours_limit(comfy_host):
    a, _ = run_and_collect(comfy_host, oom_prompt("mps"), quiet_s=0.5)
    b, _ = run_and_collect(comfy_host, oom_prompt("cpu"), quiet_s=0.5)
    ids = [r["prompt_id"] for r in comfy_host.get(ROUTE)["reports"]]
    assert ids.index(b) < ids.index(a)
    assert len(comfy_host.get(ROUTE + "?limit=1")["reports"]) == 1
    assert comfy_host.get("/api" + ROUTE + "?limit=1")["reports"][0]["prompt_id"] == ids[0]


@pytest.fixture
def own_host(tmp_path):
    """A second ComfyUI of our own, so restarting it never disturbs the shared session host."""
    from support.comfy_host import ComfyHost, host_unavailable_reason

    reason = host_unavailable_reason()
    if reason:
        pytest.skip(reason)
    host = ComfyHost(tmp_path)
    host.start()
    yield host
    host.stop()


def test_report_survives_a_restart(own_host):
    prompt_id, msgs = run_and_collect(own_host, oom_prompt("cuda_caching"), quiet_s=0.5)
    (sent,) = oom_events(msgs, prompt_id)
    path = own_host.base / "user" / "gpu_garden" / "oom_reports.jsonl"
    assert path.is_file()
    own_host.restart()
    stored = [r for r in own_host.get(ROUTE)["reports"] if r["prompt_id"] == prompt_id]
    assert len(stored) == 1 and stored[0]["id"] == sent["id"] and stored[0]["message"] == sent["message"]


def test_store_keeps_the_last_fifty(tmp_path):
    store = oom_report.ReportStore(str(tmp_path / "g" / "oom_reports.jsonl"))
    for i in range(oom_report.MAX_REPORTS + 7):
        store.add({"id": str(i), "n": i})
    got = store.read()
    assert len(got) == oom_report.MAX_REPORTS and got[0]["n"] == oom_report.MAX_REPORTS + 6
    (tmp_path / "g" / "oom_reports.jsonl").open("a").write('{"torn": \n')
    assert store.read(limit=2)[0]["n"] == oom_report.MAX_REPORTS + 6
