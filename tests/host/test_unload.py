"""Unload Text Encoders on a real --cpu ComfyUI with the sparse SD1.5 checkpoint. Under --cpu the load and
offload devices are both the CPU, so unloading is checked through ComfyUI's loaded-model list (the test
node GGTestLoadedModels reports comfy.model_management.current_loaded_models at the end of the graph)."""
import uuid

import pytest
from PIL import Image

from support.comfy_host import sd15_prompt

NODE = "GPUGardenUnloadTextEncoders"
SETTING = "GPUGarden.AutoUnloadTextEncoders"


def fresh_text() -> str:
    return "a garden " + uuid.uuid4().hex[:8]


def with_probe(prompt: dict) -> dict:
    prompt["30"] = {"class_type": "GGTestLoadedModels", "inputs": {"anything": ["8", 0]}}
    return prompt


def with_unload(prompt: dict, mode="offload", negative=True) -> dict:
    inputs = {"positive": ["6", 0], "clip": ["4", 1], "mode": mode}
    if negative:
        inputs["negative"] = ["7", 0]
    prompt["20"] = {"class_type": NODE, "inputs": inputs}
    ks = dict(prompt["3"]["inputs"], positive=["20", 0])
    if negative:
        ks["negative"] = ["20", 1]
    prompt["3"] = dict(prompt["3"], inputs=ks)
    return prompt


def ok(entry: dict) -> dict:
    assert entry["status"]["status_str"] == "success", entry["status"]
    return entry["outputs"]


def loaded(outputs: dict) -> list[dict]:
    return outputs["30"]["loaded_models"]


def pixels(host, outputs: dict) -> bytes:
    img = outputs["9"]["images"][0]
    path = host.base / "output" / img["subfolder"] / img["filename"]
    with Image.open(path) as im:
        return im.convert("RGB").tobytes()


def report_of(outputs: dict) -> dict:
    return outputs["20"]["gpu_garden_unload"][0]


def test_node_schema(comfy_host):
    info = comfy_host.get(f"/object_info/{NODE}")[NODE]
    assert info["category"] == "GPU Garden"
    assert info["output_node"] is True
    assert set(info["input"]["required"]) == {"positive", "clip", "mode"}
    assert info["input"]["required"]["mode"][1]["default"] == "offload"
    assert info["input"]["optional"]["negative"][0] == "CONDITIONING"
    assert info["output"] == ["CONDITIONING", "CONDITIONING"]


def test_encoder_leaves_diffusion_model_stays_pixels_identical(comfy_host):
    text = fresh_text()
    plain = ok(comfy_host.run(with_probe(sd15_prompt(text, seed=11))))
    names = {m["name"]: m for m in loaded(plain)}
    assert names["SD1ClipModel"]["is_clip"] and names["SD1ClipModel"]["bytes"] > 0  # without the node it stays

    unloaded = ok(comfy_host.run(with_probe(with_unload(sd15_prompt(text, seed=11)))))
    after = [m["name"] for m in loaded(unloaded)]
    assert "SD1ClipModel" not in after
    assert "BaseModel" in after
    assert pixels(comfy_host, unloaded) == pixels(comfy_host, plain)

    r = report_of(unloaded)
    assert r["left_device"] == ["SD1ClipModel"]
    assert r["freed_bytes"] == names["SD1ClipModel"]["bytes"]
    assert r["others_changed"] == []
    (t,) = r["targets"]
    assert t["status"] == "left_device" and t["device"] == "cpu" and t["registered_after"] is False
    # --cpu: the offload device is the CPU too, so nothing is freed and the summary says so
    assert r["summary"].startswith("text encoder (SD1 CLIP) is no longer in ComfyUI's list of loaded models ("), r["summary"]
    assert "its weights stay in host RAM" in r["summary"]
    assert any("BaseModel" in o["name"] and o["bytes_after"] == o["bytes_before"] > 0 for o in r["others"])
    (d,) = r["devices"]
    assert d["device"] == "cpu" and d["freed"] == r["freed_bytes"] and d["torch_allocated_before"] is None
    assert "[GPU Garden] Unload Text Encoders (node 20): text encoder (SD1 CLIP) is no longer in ComfyUI's list" in comfy_host.log_text()


def test_requeue_unchanged_uses_cache_changed_prompt_reloads(comfy_host):
    text = fresh_text()
    first = ok(comfy_host.run(with_probe(with_unload(sd15_prompt(text, seed=12)))))
    assert report_of(first)["left_device"] == ["SD1ClipModel"]

    # Unchanged prompt: ComfyUI reuses the cached conditioning and the node's cached output; nothing reloads.
    again = comfy_host.run(with_probe(with_unload(sd15_prompt(text, seed=12))))
    outputs = ok(again)
    cached = [m[1]["nodes"] for m in again["status"]["messages"] if m[0] == "execution_cached"][0]
    assert {"6", "7", "20", "3"} <= set(cached)
    assert "SD1ClipModel" not in [m["name"] for m in loaded(outputs)]

    # Changed prompt: CLIPTextEncode reloads the encoder, encodes, and the node unloads it again.
    changed = ok(comfy_host.run(with_probe(with_unload(sd15_prompt(fresh_text(), seed=12)))))
    r = report_of(changed)
    (t,) = r["targets"]
    assert t["bytes_before"] > 0 and t["status"] == "left_device"
    assert "SD1ClipModel" not in [m["name"] for m in loaded(changed)]
    assert pixels(comfy_host, changed) == pixels(comfy_host, first)  # zero weights: same image, same encoder


def test_free_mode(comfy_host):
    outputs = ok(comfy_host.run(with_probe(with_unload(sd15_prompt(fresh_text(), seed=13), mode="free"))))
    r = report_of(outputs)
    assert r["mode"] == "free" and r["left_device"] == ["SD1ClipModel"]
    assert "free: garbage collected and the allocator cache emptied" in r["notes"]
    names = [m["name"] for m in loaded(outputs)]
    assert "SD1ClipModel" not in names and "BaseModel" in names


def test_without_negative_the_node_still_runs_and_says_what_ordering_it_cannot_guarantee(comfy_host):
    outputs = ok(comfy_host.run(with_unload(sd15_prompt(fresh_text(), seed=13), negative=False)))
    r = report_of(outputs)
    assert r["left_device"] == ["SD1ClipModel"]
    assert any(n.startswith("negative not wired through this node") for n in r["notes"])


def test_nothing_loaded_is_reported_not_invented(comfy_host):
    text = fresh_text()
    ok(comfy_host.run(with_unload(sd15_prompt(text, seed=14))))
    # Same encodes (cached), new node instance input (mode) -> node runs with the encoder already gone.
    outputs = ok(comfy_host.run(with_unload(sd15_prompt(text, seed=14), mode="free")))
    r = report_of(outputs)
    assert r["freed_bytes"] == 0 and r["left_device"] == []
    assert r["summary"] == "No text encoder of this CLIP is loaded: nothing to unload."


@pytest.fixture
def auto_mode(comfy_host):
    comfy_host.post(f"/settings/{SETTING}", True)
    try:
        yield
    finally:
        comfy_host.post(f"/settings/{SETTING}", False)


def test_auto_mode_unloads_before_sampler_without_the_node(comfy_host, auto_mode):
    status = comfy_host.get("/gpu_garden/auto_unload")
    assert status["enabled"] is True and status["installed"] is True
    assert status["seam"] == "comfy.sampler_helpers.prepare_sampling"

    outputs = ok(comfy_host.run(with_probe(sd15_prompt(fresh_text(), seed=15))))
    names = [m["name"] for m in loaded(outputs)]
    assert "SD1ClipModel" not in names and "BaseModel" in names
    last = comfy_host.get("/gpu_garden/auto_unload")["last"]
    assert last["origin"] == "auto" and last["left_device"] == ["SD1ClipModel"] and last["freed_bytes"] > 0
    assert "[GPU Garden] auto-unload before sampling: text encoder (SD1 CLIP) is no longer in ComfyUI's list" in comfy_host.log_text()

    # A changed prompt reloads the encoder, and auto mode unloads it again before the sampler.
    outputs = ok(comfy_host.run(with_probe(sd15_prompt(fresh_text(), seed=15))))
    assert "SD1ClipModel" not in [m["name"] for m in loaded(outputs)]

    comfy_host.post(f"/settings/{SETTING}", False)
    assert comfy_host.get("/gpu_garden/auto_unload")["enabled"] is False
    outputs = ok(comfy_host.run(with_probe(sd15_prompt(fresh_text(), seed=15))))
    assert "SD1ClipModel" in [m["name"] for m in loaded(outputs)]  # off: ComfyUI keeps it, as usual


def test_matches_the_clone_that_encoded(comfy_host):
    """Encoders fed through CLIPSetLastLayer load a clone of the loader's patcher; the node gets the
    loader's CLIP and still finds that clone (same weights), as with GGUF's GGUFModelPatcher clones."""
    p = sd15_prompt(fresh_text(), seed=16)
    p["10"] = {"class_type": "CLIPSetLastLayer", "inputs": {"clip": ["4", 1], "stop_at_clip_layer": -2}}
    p["6"]["inputs"]["clip"] = ["10", 0]
    p["7"]["inputs"]["clip"] = ["10", 0]
    outputs = ok(comfy_host.run(with_probe(with_unload(p))))
    assert report_of(outputs)["left_device"] == ["SD1ClipModel"]
    assert "SD1ClipModel" not in [m["name"] for m in loaded(outputs)]
