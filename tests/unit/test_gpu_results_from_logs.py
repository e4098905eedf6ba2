"""scripts/gpu_results_from_logs.py on a GPU log cut short: a clear stop naming the file, not a traceback from max()."""
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu_results_from_logs.py"


@pytest.fixture()
def mod(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("gpu_results_from_logs", SCRIPT)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    monkeypatch.setattr(m, "LOGS", tmp_path)
    return m


@pytest.mark.parametrize("reader,log", [("trace_vs_cuda", "trace_vs_cuda.txt"), ("unload", "unload.txt"), ("probe", "probe.txt")])
def test_a_log_without_rows_is_a_clear_stop(mod, tmp_path, reader, log):
    (tmp_path / log).write_text("the run was cut here\n")
    with pytest.raises(SystemExit, match=f"{log}: no result rows"):
        getattr(mod, reader)()


def test_the_committed_logs_still_read(mod):
    mod.LOGS = SCRIPT.parents[1] / "benchmarks" / "results" / "gpu_logs"
    assert mod.trace_vs_cuda()["sample_cases"] > 0 and mod.unload()["families"] and mod.probe()["cuda_median_ms"] > 0


def test_a_failed_or_cut_trace_row_is_named_not_a_traceback(mod, tmp_path):
    """gpu_trace_vs_cuda.py prints "failed: ..." for a case that raised (an OOM, a missing layout), and a run killed
    by its timeout can end mid-row: both matched the row pattern and broke the reader with an IndexError."""
    good = SCRIPT.parents[1] / "benchmarks" / "results" / "gpu_logs" / "trace_vs_cuda.txt"
    lines = good.read_text().splitlines()
    sdxl = next(ln for ln in lines if ln.startswith("sdxl sample 1024x1024 flash"))
    (tmp_path / "trace_vs_cuda.txt").write_text("\n".join([
        lines[0], sdxl,
        "sdxl decode 1024x1024 flash         failed: OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "wan21 sample 832x480x33 flash         3.87 GiB    3.91 GiB"]) + "\n")
    out = mod.trace_vs_cuda()
    assert list(out["rows"]) == ["sdxl_sample_1024x1024_flash"] and out["rows"]["sdxl_sample_1024x1024_flash"]["cuda_peak"] == round(5.22 * 2**30)
    assert set(out["failed"]) == {"sdxl_decode_1024x1024_flash", "wan21_sample_832x480x33_flash"}
    assert out["failed"]["sdxl_decode_1024x1024_flash"].startswith("failed: OutOfMemoryError")
    assert out["sample_cases"] == 1 and out["decode_cases"] == 0 and out["decode_worst_pct"] is None


def test_a_family_with_a_hyphen_is_a_row(mod, tmp_path):
    """qwen-image, z-image and hunyuan-video rows (session 34's cases) were skipped by a \\w+ family pattern."""
    good = SCRIPT.parents[1] / "benchmarks" / "results" / "gpu_logs" / "trace_vs_cuda.txt"
    header = good.read_text().splitlines()[0]
    (tmp_path / "trace_vs_cuda.txt").write_text("\n".join([
        header,
        "hunyuan-video decode 848x480x61 flash   9.19 GiB   10.00 GiB   +8.1%   8.74 GiB    9.50 GiB   9.20 GiB  10.00 GiB"
        "   +8.0%   9.50 GiB  11.00 GiB        0 B"]) + "\n")
    out = mod.trace_vs_cuda()
    assert list(out["rows"]) == ["hunyuan-video_decode_848x480x61_flash"]
    assert out["rows"]["hunyuan-video_decode_848x480x61_flash"]["cuda_peak"] == 10 * 2**30 and out["decode_cases"] == 1
