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


def test_sample_and_decode_run_in_inference_mode_as_comfyui_runs_nodes():
    """ComfyUI's executor runs every node under torch.inference_mode(); the VAE's parameters require grad, so a
    decode outside it keeps every decoder activation for a backward pass (the first GPU run did that)."""
    import importlib.util
    import types

    torch = __import__("pytest").importorskip("torch")
    spec = importlib.util.spec_from_file_location("gpu_fit_bench", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    seen = {}

    def sample(*a, **k):
        seen["sample"] = torch.is_inference_mode_enabled()
        return torch.zeros(1, 4, 8, 8)

    class VAE:
        def decode(self, s):
            seen["decode"] = torch.is_inference_mode_enabled()

    comfy = types.SimpleNamespace(
        model_management=types.SimpleNamespace(OOM_EXCEPTION=MemoryError),
        sample=types.SimpleNamespace(prepare_noise=lambda latent, seed: latent, sample=sample))
    card = types.SimpleNamespace(set=lambda cap: None, dev=torch.device("cpu"))
    run = {"family": "sdxl", "cap": 1 << 30, "latent": [1, 4, 8, 8]}
    out = bench.run_one(comfy, torch, card, None, VAE(), run, False, 1, types.SimpleNamespace(count=0))
    assert out["oom"] is False and out["decode_oom"] is False
    assert seen == {"sample": True, "decode": True}
