"""benchmarks/gpu_fit_to_card.py needs a GPU to measure; here it must import, parse its arguments and plan its
runs from the bundled layouts (--dry-run) on a CPU-only machine."""
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_fit_to_card.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_help():
    r = run("--help")
    assert r.returncode == 0 and "--dry-run" in r.stdout and "--over" in r.stdout


def test_dry_run_plans_every_family_over_its_cap():
    r = run("--dry-run")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("  ") and "cap " in ln]
    assert len(lines) == 6
    for fam, cb in (("sdxl", 2), ("flux1", 1), ("wan21", 2)):
        rows = [ln for ln in lines if ln.split()[0] == fam]
        assert len(rows) == 2 and all(f"cond batch {cb}" in ln for ln in rows)
    assert "latent [1, 16, 21, 60, 104]" in r.stdout  # Wan 2.1 at 832x480x81


def test_no_gpu_skips_cleanly(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "COMFYUI_DIR": str(tmp_path)})
    assert r.returncode == 0 and r.stdout.startswith("skipped:")


def load_bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_fit_bench", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def stub_run(torch, seen):
    """ComfyUI stand-ins that record what the benchmark calls: comfy.sample has no sample() (a run must go through
    KSampler's common_ksampler) and the VAE has no decode() (it must go through VAEDecode)."""
    import types

    def common_ksampler(model, seed, steps, cfg, sampler_name, scheduler, positive, negative, latent, denoise=1.0, **kw):
        seen.setdefault("ksampler", []).append({"seed": seed, "latent": latent, "denoise": denoise,
                                               "inference": torch.is_inference_mode_enabled()})
        return (dict(latent, samples=torch.zeros(1, 4, 8, 8)),)

    class VAEDecode:
        def decode(self, vae, samples):
            seen["decode"] = {"vae": vae, "samples": samples, "inference": torch.is_inference_mode_enabled()}
            return (torch.zeros(1, 64, 64, 3),)

    comfy = types.SimpleNamespace(model_management=types.SimpleNamespace(OOM_EXCEPTION=MemoryError),
                                  sample=types.SimpleNamespace())
    nodes = types.SimpleNamespace(common_ksampler=common_ksampler, VAEDecode=VAEDecode)
    card = types.SimpleNamespace(set=lambda cap: None, dev=torch.device("cpu"))
    return comfy, nodes, card


def run_stock(bench, torch, seen, vae="the vae"):
    comfy, nodes, card = stub_run(torch, seen)
    run = {"family": "sdxl", "cap": 1 << 30, "latent": [1, 4, 8, 8]}
    return bench.run_one(comfy, torch, card, None, vae, run, False, 1, __import__("types").SimpleNamespace(count=0), nodes)


def test_sample_and_decode_run_in_inference_mode_as_comfyui_runs_nodes():
    """ComfyUI's executor runs every node under torch.inference_mode(); the VAE's parameters require grad, so a
    decode outside it keeps every decoder activation for a backward pass (the first GPU run did that)."""
    torch = __import__("pytest").importorskip("torch")
    seen = {}
    out = run_stock(load_bench(), torch, seen)
    assert out["oom"] is False and out["decode_oom"] is False
    assert seen["ksampler"][0]["inference"] is True and seen["decode"]["inference"] is True


def test_sampling_goes_through_ksamplers_own_path_with_one_seed():
    """KSampler runs nodes.common_ksampler: fix_empty_latent_channels, the noise from its seed (the same seed the
    sampler gets), the preview callback and ComfyUI's progress-bar flag. The script called comfy.sample.sample
    itself (none of those; its own disable_pbar) and seeded noise and sampler with two separate literals."""
    torch = __import__("pytest").importorskip("torch")
    bench = load_bench()
    seen = {}
    run_stock(bench, torch, seen)
    run_stock(bench, torch, seen)
    calls = seen["ksampler"]
    assert [c["seed"] for c in calls] == [bench.SEED, bench.SEED] and all(c["denoise"] == 1.0 for c in calls)
    # EmptyLatentImage's output: a LATENT dict of zeros on the CPU, as the sampler node receives it
    lat = calls[0]["latent"]
    assert set(lat) == {"samples"} and lat["samples"].shape == (1, 4, 8, 8) and not lat["samples"].any()


def test_decode_goes_through_the_vae_decode_node_with_the_samplers_latent():
    """VAEDecode.decode takes the sampler's LATENT dict (it unbinds nested latents and joins video batches); the
    script called vae.decode on a tensor it had cast to float32 itself."""
    torch = __import__("pytest").importorskip("torch")
    seen = {}
    run_stock(load_bench(), torch, seen, vae="the sized vae")
    d = seen["decode"]
    assert d["vae"] == "the sized vae" and isinstance(d["samples"], dict) and d["samples"]["samples"].shape == (1, 4, 8, 8)


def test_models_load_as_the_loader_nodes_load_them(tmp_path):
    """UNETLoader / VAELoader run under the executor's torch.inference_mode(), and VAELoader checks the VAE
    (throw_exception_if_invalid); the script loaded both outside inference mode and never checked the VAE."""
    import types

    torch = __import__("pytest").importorskip("torch")
    bench = load_bench()
    seen = {}

    class VAE:
        def __init__(self, sd):
            seen["vae"] = torch.is_inference_mode_enabled()

        def throw_exception_if_invalid(self):
            seen["vae_checked"] = True

    def load_diffusion_model(path, model_options=None):
        seen["unet"] = (torch.is_inference_mode_enabled(), model_options)
        return "model"

    comfy = types.SimpleNamespace(sd=types.SimpleNamespace(VAE=VAE, load_diffusion_model=load_diffusion_model),
                                  utils=types.SimpleNamespace(load_torch_file=lambda p: {}))
    layouts = types.SimpleNamespace(write_sparse=lambda name, path: path)
    model, vae = bench.build(comfy, layouts, "flux1", tmp_path)
    assert model == "model" and isinstance(vae, VAE)
    assert seen == {"unet": (True, {}), "vae": True, "vae_checked": True}
