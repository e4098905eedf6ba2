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


def test_an_error_that_is_not_an_oom_fails_that_run_only():
    """A cuBLAS/cuDNN status error or a bug in one run is recorded as that run's failure (not a completion); the
    script raised it and lost every later run and the results file."""
    torch = __import__("pytest").importorskip("torch")
    bench = load_bench()
    seen = {}
    comfy, nodes, card = stub_run(torch, seen)

    def broken(*a, **kw):
        raise RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")

    nodes.common_ksampler = broken
    run = {"family": "sdxl", "cap": 1 << 30, "latent": [1, 4, 8, 8]}
    out = bench.run_one(comfy, torch, card, None, "vae", run, False, 1, __import__("types").SimpleNamespace(count=0), nodes)
    assert out["error"].startswith("sampling: RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED")
    assert out["oom"] is False and "decode" not in seen and bench.completed(out) is False


def test_a_decode_that_ran_out_of_memory_and_then_tiled_is_not_a_completion():
    """README: completed only when neither sampling nor the decode ran out of memory. ComfyUI's VAE.decode catches
    the OOM, logs it and finishes in tiles: the image exists, but the run is not a completion. A decode the guard
    planned in tiles from the start ran out of nothing: it is one."""
    import logging

    torch = __import__("pytest").importorskip("torch")
    bench = load_bench()
    seen = {}
    comfy, nodes, card = stub_run(torch, seen)
    counter = bench.DecodeOOMs()
    logging.getLogger().addHandler(counter)
    try:
        class FallsBackToTiles:
            def decode(self, vae, samples):  # ComfyUI 0.8.0 comfy/sd.py VAE.decode's own line, then its tiles
                logging.warning("Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding.")
                return (torch.zeros(1, 64, 64, 3),)

        nodes.VAEDecode = FallsBackToTiles
        run = {"family": "sdxl", "cap": 1 << 30, "latent": [1, 4, 8, 8]}
        out = bench.run_one(comfy, torch, card, None, "vae", run, False, 1, counter, nodes)
    finally:
        logging.getLogger().removeHandler(counter)
    assert out["decoded"] is True and out["decode_oom"] is True and bench.completed(out) is False
    assert bench.decode_cell(out) == "OOM->tiled"
    planned = {"variant": "guard", "oom": False, "decode_oom": False, "decoded": True, "decode_tiled": True, "samples": 1}
    assert bench.completed(planned) is True and bench.decode_cell(planned) == "tiled (planned)"
    assert bench.completed(dict(planned, decoded=False)) is False  # sampled, never decoded


def test_each_run_starts_with_cublas_workspaces_cleared_and_the_peak_reset():
    """cuBLAS keeps its workspaces in torch's allocator after the first matmul: without clearing them, the stock
    run (always first) paid for them inside its cap and the guard run found them already there."""
    import types

    bench = load_bench()
    calls = []
    cuda = types.SimpleNamespace(
        get_device_properties=lambda d: types.SimpleNamespace(total_memory=100 << 30),
        synchronize=lambda d: None, mem_get_info=lambda d: (99 << 30, 100 << 30), memory_reserved=lambda d: 0,
        set_per_process_memory_fraction=lambda f, d: calls.append(("fraction", round(f, 3))),
        reset_peak_memory_stats=lambda d: calls.append("reset_peak"), memory_allocated=lambda d: 3 << 20)
    torch = types.SimpleNamespace(cuda=cuda, _C=types.SimpleNamespace(_cuda_clearCublasWorkspaces=lambda: calls.append("clear_cublas")))
    mm = types.SimpleNamespace(get_torch_device=lambda: "cuda:0", get_free_memory=lambda dev=None, torch_free_too=False: 99 << 30,
                               unload_all_models=lambda: calls.append("unload"), soft_empty_cache=lambda force=False: None)
    card = bench.Card(types.SimpleNamespace(model_management=mm), torch)
    for cap in (10 << 30, 20 << 30):
        card.set(cap)
    assert calls == ["unload", "clear_cublas", ("fraction", 0.1), "reset_peak"] + ["unload", "clear_cublas", ("fraction", 0.2), "reset_peak"]
    # ComfyUI sees the emulated card: 1 GiB is outside torch (context), so the last cap's 20 GiB are free
    assert mm.get_free_memory("cuda:0") == 20 << 30
    assert card.start == 3 << 20  # what the run starts with, recorded (leftovers of an earlier run show)


class FakeDriver:
    """libcuda's three entry points the ballast uses, recording what is held (no GPU needed)."""

    def __init__(self, context=1, fail=0):
        self.context, self.fail, self.held, self.next = context, fail, {}, 0x7000

    def cuCtxGetCurrent(self, ref):
        ref._obj.value = self.context
        return 0

    def cuMemAlloc_v2(self, ref, size):
        if self.fail:
            return self.fail
        self.next += 0x1000
        ref._obj.value = self.next
        self.held[self.next] = size.value
        return 0

    def cuMemFree_v2(self, ptr):
        del self.held[ptr]
        return 0


class Fn:
    """A callable with the argtypes attribute ctypes functions have."""

    def __init__(self, f):
        self.f, self.argtypes = f, None

    def __call__(self, *a):
        return self.f(*a)


def fake_lib(**kw):
    import types

    drv = FakeDriver(**kw)
    return drv, types.SimpleNamespace(**{n: Fn(getattr(drv, n)) for n in ("cuCtxGetCurrent", "cuMemAlloc_v2", "cuMemFree_v2")})


def test_the_ballast_holds_exactly_what_it_is_asked_and_replaces_it():
    bench = load_bench()
    drv, lib = fake_lib()
    b = bench.Ballast(lib)
    b.hold(5 << 30)
    assert list(drv.held.values()) == [5 << 30]
    b.hold(7 << 30)  # replaces: never both at once
    assert list(drv.held.values()) == [7 << 30] and b.size == 7 << 30
    b.hold(0)
    assert drv.held == {} and b.ptr is None


def test_the_ballast_refuses_without_a_context_or_memory_and_says_so():
    import pytest

    bench = load_bench()
    with pytest.raises(RuntimeError, match="no current CUDA context"):
        bench.Ballast(fake_lib(context=0)[1]).hold(1 << 20)
    with pytest.raises(RuntimeError, match="CUresult 2"):
        bench.Ballast(fake_lib(fail=2)[1]).hold(1 << 40)


def test_a_ballast_card_holds_the_rest_of_the_card_and_leaves_comfyuis_free_memory_alone():
    """--emulate ballast: the card's free memory really is the cap (less what torch keeps), so ComfyUI's reading is
    not shifted and the allocator is not capped (a fraction caps only the native backend's caching allocator)."""
    import types

    bench = load_bench()
    drv, lib = fake_lib()
    calls = []
    state = {"free": 99 << 30}

    def mem_get_info(d):
        return state["free"] - sum(drv.held.values()), 100 << 30

    cuda = types.SimpleNamespace(
        get_device_properties=lambda d: types.SimpleNamespace(total_memory=100 << 30), synchronize=lambda d: None,
        mem_get_info=mem_get_info, memory_reserved=lambda d: 0,
        set_per_process_memory_fraction=lambda f, d: calls.append(("fraction", f)),
        reset_peak_memory_stats=lambda d: None, memory_allocated=lambda d: 0)
    torch = types.SimpleNamespace(cuda=cuda, _C=types.SimpleNamespace())
    mm = types.SimpleNamespace(get_torch_device=lambda: "cuda:0", unload_all_models=lambda: None,
                               get_free_memory=lambda dev=None, torch_free_too=False: mem_get_info(dev)[0],
                               soft_empty_cache=lambda force=False: None)
    card = bench.Card(types.SimpleNamespace(model_management=mm), torch, bench.Ballast(lib))
    for cap in (10 << 30, 20 << 30):
        card.set(cap)
        # 1 GiB is outside torch (context): the ballast holds the rest beyond the cap, and nothing is shifted
        assert list(drv.held.values()) == [100 - 1 - cap // (1 << 30) << 30]
        assert mm.get_free_memory("cuda:0") == cap
    assert calls == [] and card.hide == 0


def test_the_summary_counts_only_completed_runs_and_names_what_did_not_run():
    bench = load_bench()
    rec = lambda variant, **kw: dict({"variant": variant, "oom": False, "decode_oom": False, "completed": True,  # noqa: E731
                                      "identical": True, "identical_images": None, "error": None}, **kw)
    records = [rec("stock", decode_oom=True, completed=False), rec("guard"),
               rec("stock", error="sampling: RuntimeError: x", completed=False, identical=None),
               rec("guard", identical=None)]
    s = bench.summarize(records, 3, 0.0)
    assert (s["runs"], s["runs_planned"], s["stock_completed"], s["guard_completed"], s["errors"]) == (2, 3, 0, 2, 1)
    assert (s["stock_oom"], s["guard_oom"], s["identical_outputs"], s["compared_outputs"]) == (1, 0, 1, 1)


def test_a_guard_run_whose_guard_fell_back_is_not_a_guard_run():
    """nodes/fit_guard.guarded falls back to ComfyUI's own figure on any error of its own, silently to the caller
    (a log line): such a 'guard' run is a stock run and must not count as the guard's completion."""
    bench = load_bench()
    assert bench.guard_applied({"supplied": {"memory_required": 123, "consulted": True}}) is True
    assert bench.guard_applied({}) is False                                             # _prepare raised
    assert bench.guard_applied({"supplied": {"memory_required": 123}}) is False         # sampling never asked
    assert bench.guard_applied({"supplied": {"memory_required": 123, "consulted": False}}) is False


def test_a_guard_that_cannot_be_set_up_fails_that_run_only():
    torch = __import__("pytest").importorskip("torch")
    bench = load_bench()
    bench.load_pack()
    seen = {}
    comfy, nodes, card = stub_run(torch, seen)
    comfy.model_management.extra_reserved_memory = lambda: 400 << 20
    run = {"family": "sdxl", "cap": 1 << 30, "latent": [1, 4, 8, 8]}
    out = bench.run_one(comfy, torch, card, object(), "vae", run, True, 1, __import__("types").SimpleNamespace(count=0), nodes)
    assert out["error"].startswith("guard setup: ") and "ksampler" not in seen and bench.completed(out) is False
