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
