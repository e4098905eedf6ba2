"""Task rev59 (review of mend59/mend60, ux58, mend58): each test fails on the code before its fix (checked by reverting)."""
from gpu_garden.memory.fit import plan as fit_plan

GiB = 1 << 30


# Fit to Card's summary says what ComfyUI's loader keeps free (mend59). Off NVIDIA, ComfyUI 0.8.0's
# MIN_WEIGHT_MEMORY_RATIO is 0.4 (the node reads the live one) and load_models_gpu keeps
# max(0, free - minimum, min(free x 0.4, free - minimum_inference_memory())) of weights. 8 GiB free, no context, no
# reserve, memory_required 6 GiB, 6 GiB of weights: free - minimum = 8 - 6 = 2 GiB, the floor min(3.2, 7.2) = 3.2 GiB:
# int(0.4 x 8,589,934,592) = 3,435,973,836 B kept, so 8,589,934,592 - 3,435,973,836 = 5,153,960,756 B = 4.80 GiB stays
# free, not memory_required + reserve = 6.00 GiB (the old text). On NVIDIA (ratio 0) the text is as before.
def test_fit_summary_says_what_the_weight_floor_leaves_free():
    p = fit_plan.plan(8 * GiB, weights={"diffusion_model": 6 * GiB}, memory_required=6 * GiB, min_weight_ratio=0.4)
    assert (p["weights_on_gpu"], p["weights_offloaded"]) == (3_435_973_836, 6 * GiB - 3_435_973_836)
    assert "(ComfyUI's loader keeps 4.80 GiB free: less than 6.00 GiB, as MIN_WEIGHT_MEMORY_RATIO keeps those weights)" \
        in p["summary"]
    p = fit_plan.plan(8 * GiB, weights={"diffusion_model": 6 * GiB}, memory_required=6 * GiB)
    assert p["weights_on_gpu"] == 2 * GiB
    assert "offloaded 4.00 GiB (ComfyUI's loader keeps 6.00 GiB free: memory_required + reserve)" in p["summary"]
    # nothing kept (1 GiB free, memory_required 1.5 GiB, ratio 0): the loader's aim stands, no floor named
    p = fit_plan.plan(GiB, weights={"diffusion_model": 2 * GiB}, memory_required=3 * GiB // 2)
    assert p["weights_on_gpu"] == 0
    assert "offloaded 2.00 GiB (ComfyUI's loader keeps 1.50 GiB free: memory_required + reserve)" in p["summary"], p["summary"]


# A broken link in a models folder (mend59) was named in the route's assumptions only; the open graph's page showed the
# answer's missing files as "incomplete: X not found", as if the file were absent. The answer carries each missing
# file's why (missing_where, mend61), which the page shows (tests/web/test_estimate_tiers.py). Breaks if the answer
# leaves it out, gives a broken link's why to an absent file, or carries a user folder.
def test_the_route_says_why_a_broken_link_is_missing(monkeypatch, tmp_path):
    import json
    import os
    from pathlib import Path

    from gpu_garden.memory.estimate import layouts
    from support.fit_stubs import graph_route_on

    d = tmp_path / "models"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    (d / "vae").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere" / "vae-ft-mse.safetensors", d / "vae" / "gone.safetensors")
    routes = graph_route_on(monkeypatch, Path(__file__).parent / "stubs", d)
    wf = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sd15.safetensors"}},
          "8": {"class_type": "VAELoader", "inputs": {"vae_name": "gone.safetensors"}},
          "9": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "absent.pth"}},
          "10": {"class_type": "LoraLoader", "inputs": {"lora_name": "absent_lora.safetensors"}},
          "11": {"class_type": "CLIPLoader", "inputs": {"clip_name": "absent_te.safetensors"}},
          "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}}}
    out = routes.estimate_graph({"workflow": wf, "vram_gb": 8})
    assert out["missing"] == ["gone.safetensors", "absent_te.safetensors"], out["missing"]
    why = {m["name"]: m["why"] for m in out["missing_where"]}
    assert why == {"gone.safetensors": "a broken link (points to vae-ft-mse.safetensors, which does not exist)",
                   "absent_te.safetensors": "not found"}, why
    assert str(tmp_path) not in json.dumps(out)
