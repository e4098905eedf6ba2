"""benchmarks/gpu_checks.sh run, with python3 and nvidia-smi faked: which checks run, and that a results file comes
back only when this run wrote it (the checkout carries the committed gpu_fit_to_card.json of the first GPU run)."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "gpu_checks.sh"

FAKE_PYTHON = """#!/bin/bash
echo "$*" >> "$CALLS"
case "$*" in
  *gpu_fit_to_card.py*--decode-need*"--emulate ballast --allocator async"*) [ -n "${WRITE:-}" ] && echo '{}' > "$RESULTS/gpu_fit_vae_decode_need_ballast_async.json";;
  *gpu_fit_to_card.py*"--emulate ballast --allocator async"*) [ -n "${WRITE:-}" ] && echo '{}' > "$RESULTS/gpu_fit_to_card_ballast_async.json";;
  *gpu_fit_to_card.py*--decode-peaks*) [ -n "${WRITE:-}" ] && echo '{}' > "$RESULTS/gpu_fit_vae_decode.json";;
  *gpu_fit_to_card.py*) [ -n "${WRITE:-}" ] && echo '{}' > "$RESULTS/gpu_fit_to_card.json"; echo "fit row";;
esac
exit 0
"""


@pytest.fixture()
def checkout(tmp_path):
    """A copy of the script in a tree shaped like the repo's, with an old results file already there."""
    if not shutil.which("bash"):
        pytest.skip("no bash")
    root = tmp_path / "repo"
    (root / "benchmarks" / "results").mkdir(parents=True)
    shutil.copy(SCRIPT, root / "benchmarks" / "gpu_checks.sh")
    old = root / "benchmarks" / "results" / "gpu_fit_to_card.json"
    old.write_text('{"first run": true}\n')
    os.utime(old, (1_000_000_000, 1_000_000_000))
    (root / "build" / "gg_gpu" / "whl").mkdir(parents=True)
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "python3").write_text(FAKE_PYTHON)
    (bin_ / "nvidia-smi").write_text("#!/bin/bash\necho 'name, driver_version, memory.total [MiB]'\n")
    for f in bin_.iterdir():
        f.chmod(0o755)
    return root, bin_


def run(checkout, *checks, write=False):
    root, bin_ = checkout
    out = root.parent / "out"
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "OUT": str(out), "CALLS": str(root.parent / "calls"),
           "RESULTS": str(root / "benchmarks" / "results"), **({"WRITE": "1"} if write else {})}
    r = subprocess.run(["bash", str(root / "benchmarks" / "gpu_checks.sh"), "run", *checks], env=env,
                       capture_output=True, text=True, timeout=60)
    calls = (root.parent / "calls").read_text().splitlines() if (root.parent / "calls").exists() else []
    return r, out, calls


def test_the_committed_results_file_is_never_passed_off_as_this_runs(checkout):
    r, out, _ = run(checkout, "fit")
    assert r.returncode == 0, r.stderr
    assert not (out / "gpu_fit_to_card.json").exists()
    assert "not written by this run" in r.stdout


def test_a_results_file_this_run_wrote_comes_back(checkout):
    r, out, _ = run(checkout, "fit", "peaks", write=True)
    assert (out / "gpu_fit_to_card.json").read_text() == "{}\n"
    assert (out / "gpu_fit_vae_decode_inference.json").read_text() == "{}\n"
    assert (out / "fit_to_card.txt").read_text() == "fit row\n"


def test_fit_alone_runs_only_fit_with_a_longer_limit(checkout):
    r, out, calls = run(checkout, "fit")
    scripts = [c for c in calls if "benchmarks/" in c]
    assert len(scripts) == 1 and "gpu_fit_to_card.py --workdir /tmp/ggw --time-limit 300" in scripts[0]
    assert (out / "nvidia_smi.txt").exists()


def test_default_runs_the_four_checks_within_the_device_limit(checkout):
    r, out, calls = run(checkout)
    scripts = [c.split()[0] for c in calls if "benchmarks/" in c]
    assert scripts == ["benchmarks/bench_probe.py", "benchmarks/gpu_trace_vs_cuda.py", "benchmarks/gpu_unload.py",
                       "benchmarks/gpu_fit_to_card.py"]
    text = SCRIPT.read_text()
    # the timeouts of a full run (probe, trace, unload and fit's default) stay well under the device's 600 s a command
    per = {name: int(re.search(rf"timeout (?:\"\$\{{\w+:-)?(\d+)\}}?\"? python3 benchmarks/{name}", text).group(1))
           for name in ("bench_probe.py", "gpu_trace_vs_cuda.py", "gpu_unload.py")}
    fit = int(re.search(r"else FIT_S=\$\{FIT_S:-(\d+)\}", text).group(1))
    assert sum(per.values()) + fit <= 540, (per, fit)

def test_named_checks_run_in_the_order_named(checkout):
    r, out, calls = run(checkout, "fit", "peaks", "probe")
    scripts = [c.split()[0] for c in calls if "benchmarks/" in c]
    assert scripts == ["benchmarks/gpu_fit_to_card.py", "benchmarks/gpu_fit_to_card.py", "benchmarks/bench_probe.py"]
    assert "--decode-peaks" in [c for c in calls if "benchmarks/" in c][1]


def test_an_unknown_check_is_a_clear_error(checkout):
    r, _, calls = run(checkout, "fitt")
    assert r.returncode == 2 and "unknown check: fitt" in r.stderr and not calls


def test_the_session_34_checks_are_named_checks(checkout):
    r, out, calls = run(checkout, "context", "large", "nocudnn", "need")
    scripts = [c for c in calls if "benchmarks/" in c]
    assert [c.split()[0] for c in scripts] == ["benchmarks/gpu_cuda_context.py", "benchmarks/gpu_trace_vs_cuda.py",
                                               "benchmarks/gpu_trace_vs_cuda.py", "benchmarks/gpu_fit_to_card.py"]
    assert "--no-cudnn" in scripts[2] and "--no-cudnn" not in scripts[1] and "--decode-need" in scripts[3]
    assert {p.name for p in out.iterdir()} >= {"cuda_context.txt", "trace_vs_cuda_large.txt", "trace_vs_cuda_no_cudnn.txt",
                                               "decode_need.txt"}


def test_fit_and_need_under_comfyuis_allocator_come_back_under_their_own_names(checkout):
    """fitasync / needasync: cudaMallocAsync (ComfyUI's default backend) on a card made small by a ballast; their
    results never overwrite the native-allocator files of fit and need."""
    r, out, calls = run(checkout, "fitasync", "needasync", write=True)
    scripts = [c for c in calls if "benchmarks/" in c]
    assert len(scripts) == 2 and all("--emulate ballast --allocator async" in c for c in scripts)
    assert "--decode-need" not in scripts[0] and "--decode-need" in scripts[1]
    assert (out / "gpu_fit_to_card_ballast_async.json").read_text() == "{}\n"
    assert (out / "gpu_fit_vae_decode_need_ballast_async.json").read_text() == "{}\n"
    assert not (out / "gpu_fit_to_card.json").exists() and not (out / "gpu_fit_vae_decode_need.json").exists()
