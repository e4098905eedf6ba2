"""Measured beats modelled on a real --cpu ComfyUI: an SD1.5 run is recorded by the flight recorder; the
Footprint Estimate queued afterwards with the same checkpoint at the same latent size shows the peak that
run's sampler reached here ("measured here"), read from GET /gpu_garden/runs: on this --cpu host the process's
peak RSS, shown with what it holds and no percentage against the formula (ui49).
A size no run was recorded at shows none. Sizes no other host test uses, so exactly one run matches."""
import time
import uuid

from support.comfy_host import sd15_prompt

NODE = "GPUGardenFootprintEstimate"
W, H = 72, 56  # pixels; multiples of 8 no other host test queues


def with_estimate(prompt: dict) -> dict:
    prompt["20"] = {"class_type": NODE, "inputs": {"model": ["4", 0], "latent": ["5", 0], "clip": ["4", 1], "vae": ["4", 2],
                                                   "width": 1024, "height": 1024, "frames": 1, "batch": 1, "cfg": "auto",
                                                   "vram_gb": 8.0, "when_it_does_not_fit": "warn", "mode": "formula"}}
    prompt["3"] = dict(prompt["3"], inputs=dict(prompt["3"]["inputs"], latent_image=["20", 0]))
    return prompt


def recorded(host, prompt_id, timeout=60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for run in host.get("/gpu_garden/runs?limit=50")["runs"]:
            if run["prompt_id"] == prompt_id:
                return run
        time.sleep(0.2)
    raise AssertionError(f"run {prompt_id} not recorded:\n{host.log_tail()}")


def estimate_of(entry: dict) -> dict:
    assert entry["status"]["status_str"] == "success", entry["status"]
    return entry["outputs"]["20"]["gpu_garden_estimate"][0]


def test_estimate_shows_the_recorded_sampler_peak(comfy_host):
    # a unique prompt text: the text encoder runs (and loads) in this run, so the run lists all three models
    first = comfy_host.queue(sd15_prompt("a measured garden " + uuid.uuid4().hex, width=W, height=H, seed=41))
    assert comfy_host.wait(first)["status"]["status_str"] == "success"
    run = recorded(comfy_host, first)
    assert run["status"] == "success" and run["latent"]["width"] == W
    sampler = [n for n in run["nodes"] if n["type"] == "KSampler"]
    assert len(sampler) == 1 and sampler[0]["peak"]["cpu"] > 0
    recorded_peak = sampler[0]["peak"]["cpu"]  # a --cpu host: the sampler's peak RSS

    entry = comfy_host.run(with_estimate(sd15_prompt("another garden " + uuid.uuid4().hex, width=W, height=H, seed=42)))
    est = estimate_of(entry)
    assert (est["width"], est["height"]) == (W, H)
    m = est.get("measured")
    assert m is not None, est.keys()
    assert m["peak"] == recorded_peak
    assert (m["node"], m["compare_to"], m["device"], m["run"], m["runs"]) == ("KSampler", "rss", "cpu", first, 1)
    assert m["label"] == "measured here" and m["when"].startswith(time.strftime("%Y-", time.gmtime(run["ended"])))
    # a --cpu host's RSS is the whole process, not the sample phase: shown with what it holds, no percentage (ui49)
    assert (m["formula"], m["diff_pct"]) == (None, None)
    assert m["note"].startswith("the whole ComfyUI process (Python, torch, every model in RAM)")


def test_no_measured_at_a_size_never_recorded(comfy_host):
    est = estimate_of(comfy_host.run(with_estimate(sd15_prompt("a garden " + uuid.uuid4().hex, width=80, height=48, seed=43))))
    assert "measured" not in est
