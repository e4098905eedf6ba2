"""Task ellm22: Gemma 4's per-layer-embedding models (E2B, E4B) and two bench comparisons, each checked by hand against
the runtime's source or a config.json's arithmetic."""
import importlib.util
from pathlib import Path

GiB, MiB = 1 << 30, 1 << 20


def _bench():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_llm.py"
    spec = importlib.util.spec_from_file_location("bench_llm_ellm22", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _row(kv_mib, notes, runtime="llama.cpp"):
    return {"runtime": runtime, "measured": {"kv_mib": kv_mib}, "notes": notes}


# llama.cpp's memory breakdown prints size_t / MiB (common_memory_breakdown_print, ggml-org/llama.cpp common/fit.cpp):
# a context of 96 MiB KV + 4 x 36 x 2,195,456 B of DeltaNet state = 397.5 MiB prints 397 (Qwen3-Coder-Next, -c 4096
# -np 4); 396.99 or 398.0 would not print 397
BREAKDOWN = ["CUDA0 (RTX 5090) total 32606 = free 1057 + self 29365 (model 28609 + context 397 + compute 358)"]


def test_breakdown_context_column_truncates():
    b = _bench()
    assert b.kv_exact(_row(397.0, BREAKDOWN), "kv_mib", 397.5, "MiB")
    assert b.kv_exact(_row(397.0, BREAKDOWN), "kv_mib", 397.0, "MiB")
    assert not b.kv_exact(_row(397.0, BREAKDOWN), "kv_mib", 398.0, "MiB")
    assert not b.kv_exact(_row(397.0, BREAKDOWN), "kv_mib", 396.99, "MiB")


def test_two_decimal_kv_line_keeps_half_a_unit():
    # "KV buffer size = 397.50 MiB" is printed with two decimals: 397.5 is not 397, and a row whose breakdown quotes
    # another context figure is not read as truncated
    b = _bench()
    assert not b.kv_exact(_row(397.0, ["llama_kv_cache: KV buffer size = 397.00 MiB"]), "kv_mib", 397.5, "MiB")
    assert not b.kv_exact(_row(397.0, ["(model 1 + context 398 + compute 2)"]), "kv_mib", 397.5, "MiB")
    assert b.kv_exact(_row(397.5, []), "kv_mib", 397.5, "MiB")
