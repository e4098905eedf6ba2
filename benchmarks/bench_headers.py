"""Header read cost is flat in file size: a 24 GB sparse safetensors file and a 24 GB sparse GGUF file must be
read in <= 20 ms (median of repeated reads, warm page cache).

    python benchmarks/bench_headers.py
"""
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from support.pack import load_pack  # noqa: E402

load_pack()

from gpu_garden.memory.estimate import families, headers, layouts  # noqa: E402
from results import save  # noqa: E402

TARGET_MS = 20.0
SIZE = 24 * 10**9


def sparse_safetensors(d: Path) -> Path:
    lay = layouts.load("flux_flux1-dev")  # 23.8 GB; pad with one tensor to 24 GB
    pad = SIZE - lay["total_bytes"]
    lay["tensors"]["pad.weight"] = {"dtype": "U8", "shape": [pad]}
    return layouts.write_sparse(lay, d / "flux1-dev-24GB.safetensors")


def sparse_gguf(d: Path):
    """FLUX.1-dev as Q8_0 (BF16 where rows are not whole blocks), padded to 24 GB; tensor data left as a hole."""
    try:
        from support.gguf_files import sparse_gguf_from_layout
        return sparse_gguf_from_layout(d / "flux1-dev-Q8_0-24GB.gguf", pad_to=SIZE)[0]
    except ImportError:
        return None


def timed(fn, repeat=25):
    fn()  # warm
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts), max(ts), out


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        out = {}
        rows = [("safetensors", sparse_safetensors(d))]
        try:
            g = sparse_gguf(d)
        except Exception as exc:  # the gguf writer's API moves; report, don't crash
            print(f"gguf: could not write a sparse file ({type(exc).__name__}: {exc})")
            g = None
        if g:
            rows.append(("gguf", g))
        print(f"{'format':12} {'file size':>12} {'tensors':>8} {'read ms':>8} {'max':>7} {'+split ms':>10}  target: read <= {TARGET_MS:.0f} ms (median)")
        for fmt, p in rows:
            med, worst, table = timed(lambda: headers.read_tensors(p))
            med2, _, _ = timed(lambda: families.split_components(headers.read_tensors(p)))
            ok &= med <= TARGET_MS
            out[fmt] = {"file_gb": round(p.stat().st_size / 1e9, 2), "tensors": len(table), "read_ms": round(med, 2),
                        "read_max_ms": round(worst, 2), "read_split_ms": round(med2, 2)}
            print(f"{fmt:12} {p.stat().st_size / 1e9:10.2f} GB {len(table):8} {med:8.2f} {worst:7.2f} {med2:10.2f}  "
                  f"{'ok' if med <= TARGET_MS else 'SLOW'}")
        save("bench_headers", "python benchmarks/bench_headers.py", {"target_ms": TARGET_MS, "formats": out})
        print("(+split: read, component split and family detection together; the sparse files use a few MB of disk)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
