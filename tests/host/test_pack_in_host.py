import re

EXPECTED = {"GPUGardenVRAMBudget", "GPUGardenFootprintEstimate", "GPUGardenUnloadTextEncoders"}


def test_pack_loads_without_import_error(comfy_host):
    log = comfy_host.log_text()
    assert "comfyui-gpu-garden" in log  # listed under "Import times for custom nodes"
    startup = log.split("Starting server")[0]  # the host is shared: later lines belong to other tests' runs
    bad = [l for l in startup.splitlines() if re.search(r"IMPORT FAILED|Cannot import|\[GPU Garden\].*(disabled|failed)", l)
           and "nodes_audio" not in l and "nodes_lt_audio" not in l and "nodes_audio_encoder" not in l]
    assert bad == []


def test_object_info_lists_every_node_under_category(comfy_host):
    info = comfy_host.get("/object_info")
    ours = {k: v for k, v in info.items() if v.get("category", "").startswith("GPU Garden") and not k.startswith("GGTest")}
    assert set(ours) >= EXPECTED
    for v in ours.values():
        assert v["python_module"].endswith("comfyui-gpu-garden")


def test_extensions_lists_pack_js(comfy_host):
    exts = comfy_host.get("/extensions")
    assert "/extensions/comfyui-gpu-garden/gpu_garden.js" in exts


def test_health_route_names_versions_and_every_hook(comfy_host):
    h = comfy_host.get("/gpu_garden/health")
    assert h["pack_version"] == "0.1.0" and h["comfyui_version"] == "0.8.0"
    for name in ("oom_capture.execute", "oom_capture.unload_all_models", "oom_capture.handle_execution_error",
                 "oom_capture.execute_async", "budget.push", "auto_unload.prepare_sampling"):
        assert h["features"][name]["installed"] is True, (name, h["features"].get(name))
    for entry in h["features"].values():
        assert {"installed", "working", "last_error"} <= set(entry) <= {"installed", "working", "last_error", "enabled", "note", "title"}
    assert comfy_host.get("/api/gpu_garden/health")["pack_version"] == "0.1.0"
