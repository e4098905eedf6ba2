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
