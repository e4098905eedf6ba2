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


def test_the_large_decodes_join_and_no_cudnn_rows_stay_apart(mod, tmp_path):
    good = SCRIPT.parents[1] / "benchmarks" / "results" / "gpu_logs" / "trace_vs_cuda.txt"
    lines = good.read_text().splitlines()
    sdxl = next(ln for ln in lines if ln.startswith("sdxl sample 1024x1024 flash"))
    (tmp_path / "trace_vs_cuda.txt").write_text("\n".join([lines[0], sdxl]) + "\n")
    row = ("sd1 decode 512x512 flash            483.62 MiB    1.60 GiB  +70.5%  324.03 MiB    1.44 GiB 487.13 MiB   1.63 GiB"
           "  +70.3% 658.00 MiB   2.22 GiB  32.00 MiB")
    (tmp_path / "trace_vs_cuda_no_cudnn.txt").write_text("\n".join([lines[0], row]) + "\n")
    (tmp_path / "trace_vs_cuda_large.txt").write_text("\n".join([lines[0], row.replace("sd1 decode 512x512", "sd1 decode 2048x2048")]) + "\n")
    out = mod.trace_vs_cuda()
    assert list(out["rows"]) == ["sdxl_sample_1024x1024_flash", "sd1_decode_2048x2048_flash"] and out["decode_cases"] == 1
    assert list(out["no_cudnn_rows"]) == ["sd1_decode_512x512_flash"]
    assert out["no_cudnn_rows"]["sd1_decode_512x512_flash"]["cuda_peak"] == round(1.60 * 2**30)


def test_the_cuda_context_reads_the_first_figure_and_the_largest_with_handles(mod, tmp_path):
    assert mod.cuda_context() == {}
    (tmp_path / "cuda_context.txt").write_text(
        "after init: device used 621 MiB, torch reserved 2 MiB, context = 619 MiB; nvidia-smi 621 MiB\n"
        "after a cuBLAS fp16 matmul: context+handles = 685 MiB, reserved 98 MiB\n"
        "after a cuDNN fp16 conv: context+handles = 693 MiB, reserved 134 MiB\n"
        "after SDPA bf16: context+handles = 690 MiB, reserved 182 MiB; nvidia-smi 875 MiB\n")
    assert mod.cuda_context() == {"cuda_context_mib": 619, "cuda_context_with_handles_mib": 693}
