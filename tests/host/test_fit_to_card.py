"""Fit to Card on a real --cpu ComfyUI 0.8.0 with the sparse SD1.5 checkpoint.

The test node GGTestLoadCalls (tests/host/test_nodes/fit_probe.py) records every load_models_gpu call, so
the figures ComfyUI's own loader received are read from ComfyUI itself, not from the pack."""
import uuid

from PIL import Image

from support.comfy_host import sd15_prompt

NODE = "GPUGardenFitToCard"
SETTING = "GPUGarden.FitToCard"


def fresh_text() -> str:
    return "a garden " + uuid.uuid4().hex[:8]


def with_probe(prompt: dict) -> dict:
    prompt["30"] = {"class_type": "GGTestLoadCalls", "inputs": {"anything": ["8", 0]}}
    return prompt


def with_fit(prompt: dict, mode="apply", vram_gb=0.0) -> dict:
    prompt["20"] = {"class_type": NODE, "inputs": {"model": ["4", 0], "vae": ["4", 2], "clip": ["4", 1],
                                                   "latent": ["5", 0], "vram_gb": vram_gb, "mode": mode}}
    prompt["3"] = dict(prompt["3"], inputs=dict(prompt["3"]["inputs"], model=["20", 0], latent_image=["20", 3]))
    prompt["8"] = dict(prompt["8"], inputs=dict(prompt["8"]["inputs"], vae=["20", 1]))
    return prompt


def clear_probe(host) -> None:
    """The probe returns the loads made since it last ran: on the shared host other tests' loads come first."""
    ok(host.run({"30": {"class_type": "GGTestLoadCalls", "inputs": {"anything": 0}}}))


def ok(entry: dict) -> dict:
    assert entry["status"]["status_str"] == "success", entry["status"]
    return entry["outputs"]


def calls(outputs: dict, model: str) -> list[dict]:
    return [c for c in outputs["30"]["load_calls"] if c["models"] == [model]]


def fit_ui(outputs: dict) -> dict:
    return outputs["20"]["gpu_garden_fit"][0]


def pixels(host, outputs: dict) -> bytes:
    img = outputs["9"]["images"][0]
    with Image.open(host.base / "output" / img["subfolder"] / img["filename"]) as im:
        return im.convert("RGB").tobytes()


def test_schema(comfy_host):
    info = comfy_host.get(f"/object_info/{NODE}")[NODE]
    assert info["category"] == "GPU Garden" and "Fit to Card" in info["display_name"]
    assert set(info["input"]["required"]) == {"model", "vram_gb", "mode"}
    assert set(info["input"]["optional"]) == {"vae", "clip", "latent", "budget"}
    assert info["input"]["optional"]["budget"][0] == "GPU_GARDEN_BUDGET"
    assert info["input"]["required"]["mode"][1]["options"] == ["apply", "advise"]
    assert info["output"] == ["MODEL", "VAE", "CLIP", "LATENT"]
    assert set(info["input"].get("hidden", {})) >= {"prompt", "unique_id"}  # the loaders upstream of the node


def test_loader_receives_our_figure_vae_sized_from_it_images_identical(comfy_host):
    text = fresh_text()
    clear_probe(comfy_host)
    plain = ok(comfy_host.run(with_probe(sd15_prompt(text, width=128, height=128, seed=21))))
    fitted = ok(comfy_host.run(with_probe(with_fit(sd15_prompt(text, width=128, height=128, seed=21)))))
    ui = fit_ui(fitted)

    (stock,) = calls(plain, "BaseModel")
    (ours,) = calls(fitted, "BaseModel")
    # the sampler's load: ComfyUI received exactly the figure the node reports, for both of its arguments
    assert ours["memory_required"] == ui["memory_required"] > 0
    assert ours["minimum_memory_required"] == ui["memory_required"]
    assert ui["cond_batch"] == 2  # KSampler at cfg 7: cond and uncond batched
    # ... and it is not ComfyUI's own heuristic, which the node reports beside it (read from the live model)
    assert stock["memory_required"] == ui["stock_memory_required"]
    assert stock["minimum_memory_required"] == ui["stock_minimum_memory_required"]
    assert ours["memory_required"] != stock["memory_required"]

    # the VAE decode's load and batch are sized from our per-sample figure
    (vae_stock,) = calls(plain, "AutoencoderKL")
    (vae_ours,) = calls(fitted, "AutoencoderKL")
    assert vae_ours["memory_required"] == ui["vae_memory_used_decode"] > 0
    assert vae_ours["memory_required"] != vae_stock["memory_required"]
    assert ui["applied"] == ["memory_required", "vae_sizing"]

    assert pixels(comfy_host, fitted) == pixels(comfy_host, plain)
    assert "memory_required for ComfyUI's loader" in ui["face"]
    assert fitted["20"]["text"][0] == ui["face"]
    assert "[GPU Garden] Fit to Card: ComfyUI's loader gets memory_required %d" % ui["memory_required"] in comfy_host.log_text()


def test_plan_on_a_budget_is_reported(comfy_host):
    outputs = ok(comfy_host.run(with_probe(with_fit(sd15_prompt(fresh_text(), seed=22), vram_gb=12))))
    ui = fit_ui(outputs)
    assert ui["budget"] == 12 * 1024 ** 3 and ui["fits"] is True
    assert ui["summary"].startswith("all ") and "predicted peak" in ui["summary"] and "of 12.00 GiB" in ui["summary"]
    assert ui["steps"] == [] and ui["offers"] == []


def test_advise_changes_nothing(comfy_host):
    text = fresh_text()
    plain = ok(comfy_host.run(with_probe(sd15_prompt(text, seed=23))))
    advised = ok(comfy_host.run(with_probe(with_fit(sd15_prompt(text, seed=23), mode="advise"))))
    ui = fit_ui(advised)
    assert ui["applied"] == [] and ui["face"].startswith("Advice only")
    assert calls(advised, "BaseModel")[0]["memory_required"] == calls(plain, "BaseModel")[0]["memory_required"]
    assert calls(advised, "AutoencoderKL")[0]["memory_required"] == calls(plain, "AutoencoderKL")[0]["memory_required"]


def test_automatic_setting_guards_every_sampler_without_the_node(comfy_host):
    assert comfy_host.get("/gpu_garden/fit")["enabled"] is False
    assert comfy_host.get("/gpu_garden/health")["features"]["fit_guard.prepare_sampling"]["installed"] is True
    comfy_host.post(f"/settings/{SETTING}", True)
    try:
        st = comfy_host.get("/gpu_garden/fit")
        assert st["enabled"] is True and st["installed"] is True and st["seam"] == "comfy.sampler_helpers.prepare_sampling"
        text = fresh_text()
        outputs = ok(comfy_host.run(with_probe(sd15_prompt(text, seed=24))))
        last = comfy_host.get("/gpu_garden/fit")["last"]
        assert last["origin"] == "auto" and last["cond_batch"] == 2 and last["consulted"] is True
        # automatic mode's own record (no node shows it: the sidebar reads it), with the node's keys for its plan;
        # the CPU host has no GPU budget, so there is no plan to offer from (unit test: with a budget it carries offers)
        assert comfy_host.get("/gpu_garden/fit")["last_auto"] == last
        assert last["budget"] is None and last["offers"] == [] and last["steps"] == [] and last["fits"] is None
        (load,) = calls(outputs, "BaseModel")
        assert load["memory_required"] == last["memory_required"] != last["stock_memory_required"]
        # the VAE too, as the node sizes it: its decode load gets our per-sample figure, not ComfyUI's
        vae = comfy_host.get("/gpu_garden/fit")["last_vae"]
        assert vae["origin"] == "auto" and vae["kind"] == "kl" and vae["tiled"] is False
        (vae_load,) = calls(outputs, "AutoencoderKL")
        assert vae_load["memory_required"] == vae["memory_used_decode"]
    finally:
        comfy_host.post(f"/settings/{SETTING}", False)
    outputs = ok(comfy_host.run(with_probe(sd15_prompt(text, seed=25))))
    (load,) = calls(outputs, "BaseModel")
    assert load["memory_required"] == last["stock_memory_required"]  # off: ComfyUI's own figure again
    (vae_stock,) = calls(outputs, "AutoencoderKL")
    assert vae_stock["memory_required"] != vae["memory_used_decode"]  # and ComfyUI's own VAE figure


def test_decode_tiled_from_the_budget_without_an_oom_first(comfy_host):
    # 512x512 on a 1.25 GiB plan: ComfyUI's reserve (400 MiB) and the fp32 VAE (about 320 MiB on the CPU) leave
    # less than one untiled decode (about 0.7 GiB), so the VAE copy decodes in tiles the plan sized from the budget
    # ComfyUI's tiled decode runs three passes of tiles; on a shared 2-core CPU this prompt has taken over 300 s twice
    # (the sampler step itself at 59 s/it), so it gets a longer wait than run()'s default. Not a speed target.
    prompt = with_probe(with_fit(sd15_prompt(fresh_text(), width=512, height=512, seed=26), vram_gb=1.25))
    outputs = ok(comfy_host.run(prompt, timeout=900))
    ui = fit_ui(outputs)
    d = ui["decode"]
    assert d["tiled"] is True and 128 <= d["tile_px"] < 512 and ui["applied"] == ["memory_required", "vae_tiled"]
    assert f"decode in {d['tile_px']} px tiles" in ui["summary"]
    (vae_load,) = calls(outputs, "AutoencoderKL")
    assert vae_load["memory_required"] == ui["vae_memory_used_decode"] == d["bytes"]
    assert "Ran out of memory when regular VAE decoding" not in comfy_host.log_text()


def test_gpu_benchmark_flow_runs_on_cpu():
    """benchmarks/gpu_fit_to_card.py --cpu-smoke: the GPU proof's whole flow (sparse checkpoint, ComfyUI's real
    sampler through the guard's clone, the sized VAE copy, the comparison) on SD1.5 on the CPU."""
    import os
    import subprocess
    from pathlib import Path

    from support.comfy_host import host_unavailable_reason

    reason = host_unavailable_reason()
    if reason:
        import pytest

        pytest.skip(reason)
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_fit_to_card.py"
    r = subprocess.run([os.environ["COMFYUI_PYTHON"], str(script), "--cpu-smoke"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "completed without an OOM: stock 1/1, guard 1/1" in r.stdout
    assert "outputs identical where both completed: 1/1" in r.stdout
    guard = [ln for ln in r.stdout.splitlines() if ln.startswith("sd1") and " guard " in ln]
    assert guard and "MiB" in guard[0]  # the figure the guard supplied, not ComfyUI's


def test_text_encoders_leave_when_the_plan_needs_their_room(comfy_host):
    # a 3 GiB plan: the fp32 U-Net on the CPU (about 3.2 GiB) and the encoder do not fit together, so the
    # cheapest step applies: this CLIP's encoder leaves before the sampler loads; the image is unchanged
    text = fresh_text()
    plain = ok(comfy_host.run(with_probe(sd15_prompt(text, seed=27))))
    p = with_probe(with_fit(sd15_prompt(text, seed=27), vram_gb=3))
    p["31"] = {"class_type": "GGTestLoadedModels", "inputs": {"anything": ["3", 0]}}
    outputs = ok(comfy_host.run(p))
    ui = fit_ui(outputs)
    assert ui["text_encoders_off"] is True and ui["steps"][0]["id"] == "text_encoders_off"
    last = comfy_host.get("/gpu_garden/fit")["last"]
    assert last["origin"] == "node" and last["encoders_offloaded"] == ["SD1ClipModel"]
    assert "SD1ClipModel" not in [m["name"] for m in outputs["31"]["loaded_models"]]
    (load,) = calls(outputs, "BaseModel")
    assert load["memory_required"] == last["memory_required"] == ui["memory_required"]
    assert pixels(comfy_host, outputs) == pixels(comfy_host, plain)


def test_context_windows_count_one_window(comfy_host):
    # ComfyUI 0.8.0's ContextWindowsManual on the batch (dim 0): 4 latents, windows of 2. Sampling then runs 2 at a
    # time, and ComfyUI's loader gets our figure for 2, which the node predicts too (it sees the handler)
    def prompt(windows: bool):
        p = with_probe(with_fit(sd15_prompt(fresh_text(), seed=28)))
        p["5"]["inputs"]["batch_size"] = 4
        if windows:
            p["21"] = {"class_type": "ContextWindowsManual", "inputs": {
                "model": ["4", 0], "context_length": 2, "context_overlap": 0, "context_schedule": "standard_static",
                "context_stride": 1, "closed_loop": False, "fuse_method": "pyramid", "dim": 0, "freenoise": False}}
            p["20"]["inputs"]["model"] = ["21", 0]
        return p

    whole = ok(comfy_host.run(prompt(False)))
    last_whole = comfy_host.get("/gpu_garden/fit")["last"]
    windowed = ok(comfy_host.run(prompt(True)))
    last = comfy_host.get("/gpu_garden/fit")["last"]
    assert last_whole["latent_shape"][0] == 4 and last["latent_shape"][0] == 2
    (load,) = calls(windowed, "BaseModel")
    assert load["memory_required"] == last["memory_required"] == fit_ui(windowed)["memory_required"]
    assert last["memory_required"] < last_whole["memory_required"] == calls(whole, "BaseModel")[0]["memory_required"]


def run_events(host, prompt: dict) -> tuple[dict, list[dict]]:
    """(outputs, websocket messages) of one prompt, queued from a page of its own."""
    ws = host.websocket()
    try:
        pid = host.queue(prompt, client_id=ws.client_id)
        msgs = host.collect_events(ws, lambda m: m.get("type") in ("execution_success", "execution_error")
                                   and m["data"].get("prompt_id") == pid, timeout=600)
    finally:
        ws.close()
    return ok(host.wait(pid)), msgs


def cached_nodes(msgs: list[dict]) -> set:
    return {n for m in msgs if m.get("type") == "execution_cached" for n in m["data"]["nodes"]}


def set_budget(host, n: int) -> None:
    ok(host.run({"40": {"class_type": "GGTestFitBudget", "inputs": {"bytes": n}}}))


def test_cached_graph_reruns_nothing_and_the_tile_follows_the_live_budget(comfy_host):
    # ComfyUI caches Fit to Card's outputs. The same graph queued twice runs nothing downstream of it again (the
    # load probe excepted: it always runs). Then the budget shrinks inside the third prompt, after Fit to Card (as
    # another process taking memory would; only the sampler and what follows run again): the sampler and the decode
    # plan from the budget of that moment. 256 px decodes whole on 8 GiB, in tiles on 0.85 GiB (less the fp32 VAE,
    # ~320 MiB, and ComfyUI's 400 MiB reserve: under one sample's ~170 MiB), with no out-of-memory error first
    text = fresh_text()
    set_budget(comfy_host, 8 * 1024 ** 3)
    clear_probe(comfy_host)
    try:
        first, _ = run_events(comfy_host, with_probe(with_fit(sd15_prompt(text, width=256, height=256, seed=31))))
        assert fit_ui(first)["decode"]["tiled"] is False
        (vae_first,) = calls(first, "AutoencoderKL")
        assert vae_first["memory_required"] == fit_ui(first)["vae_memory_used_decode"]
        again, msgs = run_events(comfy_host, with_probe(with_fit(sd15_prompt(text, width=256, height=256, seed=31))))
        assert {"20", "3", "8", "9"} <= cached_nodes(msgs)
        assert not [m for m in msgs if m.get("type") == "executing" and m["data"].get("node") in ("20", "3", "8", "9")]
        assert again["30"]["load_calls"] == []

        small = int(0.85 * 1024 ** 3)
        p = with_probe(with_fit(sd15_prompt(text, width=256, height=256, seed=31)))
        p["41"] = {"class_type": "GGTestFitBudget", "inputs": {"bytes": small, "latent": ["20", 3]}}
        p["3"]["inputs"]["latent_image"] = ["41", 0]
        outputs, msgs = run_events(comfy_host, p)
        assert "20" in cached_nodes(msgs) and not {"3", "8"} & cached_nodes(msgs)
        st = comfy_host.get("/gpu_garden/fit")
        assert st["last"]["origin"] == "node" and st["last"]["budget"] == small
        (load,) = calls(outputs, "BaseModel")
        assert load["memory_required"] == st["last"]["memory_required"]
        vae = st["last_vae"]
        assert vae["origin"] == "node" and vae["tiled"] is True and vae["budget"] == small
        assert 16 <= vae["tile"]["tile_x"] < 32  # latent units: 128..248 px, under the whole 256
        (vae_load,) = calls(outputs, "AutoencoderKL")
        assert vae_load["memory_required"] == vae["memory_used_decode"] < vae_first["memory_required"]
        assert "Ran out of memory when regular VAE decoding" not in comfy_host.log_text()
    finally:
        set_budget(comfy_host, 0)


def test_fit_status_is_per_user(tmp_path_factory):
    """Under --multi-user, GET /gpu_garden/fit shows each user the plans of their own prompts: alice plans for
    12 GiB, then bob for 6 GiB; alice still reads hers (the user comes from the comfy-user header, or from the
    client_id a page registered with POST /gpu_garden/auto_unload)."""
    import json
    import urllib.request

    from support.comfy_host import ComfyHost, host_unavailable_reason

    reason = host_unavailable_reason()
    if reason:
        import pytest

        pytest.skip(reason)
    host = ComfyHost(tmp_path_factory.mktemp("comfy_users"))
    host.start(extra_args=("--multi-user",))
    try:
        def call(method, path, user, body=None):
            data = None if body is None else json.dumps(body).encode()
            req = urllib.request.Request(host.url + path, data=data, method=method,
                                         headers={"comfy-user": user, "Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read())

        budgets = {}
        for name, gb in (("alice", 12), ("bob", 6)):
            user = host.post("/users", {"username": f"{name}-{uuid.uuid4().hex[:6]}"})
            cid = f"{name}-page-{uuid.uuid4().hex[:8]}"
            call("POST", "/gpu_garden/auto_unload", user, {"client_id": cid})
            ok(host.wait(host.queue(with_fit(sd15_prompt(fresh_text(), seed=40), vram_gb=gb), client_id=cid)))
            budgets[name] = (user, cid, gb * 1024 ** 3)
        for name, (user, cid, budget) in budgets.items():
            st = call("GET", "/gpu_garden/fit", user)
            assert st["user"] == user and st["last"]["origin"] == "node" and st["last"]["budget"] == budget, name
            assert host.get(f"/gpu_garden/fit?client_id={cid}")["last"]["budget"] == budget, name
        assert host.get("/gpu_garden/fit")["last"] is None  # "default" ran nothing
    finally:
        host.stop()


def test_vae_encode_is_sized_from_our_figure(comfy_host):
    # VAE Encode of a 256 px image through the node's VAE copy: ComfyUI's encode load receives our per-sample encode
    # figure (the one the copy answered, kept as last_vae), not its own, which it receives without the node
    import random

    def prompt(fit: bool) -> dict:
        color = random.randrange(1 << 24)  # a new image each time: the encode is never served from the cache
        p = {"4": sd15_prompt()["4"],
             "50": {"class_type": "EmptyImage", "inputs": {"width": 256, "height": 256, "batch_size": 1, "color": color}},
             "51": {"class_type": "VAEEncode", "inputs": {"pixels": ["50", 0], "vae": ["20", 1] if fit else ["4", 2]}},
             "30": {"class_type": "GGTestLoadCalls", "inputs": {"anything": ["51", 0]}}}
        if fit:
            p["20"] = {"class_type": NODE, "inputs": {"model": ["4", 0], "vae": ["4", 2], "vram_gb": 0.0, "mode": "apply"}}
        return p

    clear_probe(comfy_host)
    (stock,) = calls(ok(comfy_host.run(prompt(False))), "AutoencoderKL")
    (ours,) = calls(ok(comfy_host.run(prompt(True))), "AutoencoderKL")
    vae = comfy_host.get("/gpu_garden/fit")["last_vae"]
    assert vae["op"] == "encode" and vae["origin"] == "node" and vae["kind"] == "kl"
    assert vae["pixels"] == [1, 3, 256, 256]  # the shape VAE.encode sizes, after its movedim
    assert ours["memory_required"] == vae["memory_used_encode"] > 0
    assert ours["memory_required"] != stock["memory_required"]
