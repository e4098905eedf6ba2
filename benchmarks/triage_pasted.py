"""Logs as users paste them: every case of the unseen corpus re-read under the paste transforms of
tests/unit/test_triage_pasted.py (quotes, fences, CRLF, textwrap at 60/80/120 columns, a terminal's cut at 80/100),
against its own untransformed reading. Per transform: the cases whose cause, runtime, device or numbers change, and the
right causes lost (or gained). Nothing is tuned here. Writes benchmarks/results/triage_pasted.json.

    python benchmarks/triage_pasted.py
"""
import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
import conftest  # noqa: E402,F401  (loads the repo as gpu_garden)
from support import unseen_corpus as U  # noqa: E402
from results import save  # noqa: E402

_spec = importlib.util.spec_from_file_location("test_triage_pasted", REPO / "tests/unit/test_triage_pasted.py")
T = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(T)  # the transforms and the reading key, one definition shared with the test


def main() -> int:
    cases = [(U.load(p)[0], U.load(p)[1]["cause"]) for paths in U.batches().values() for p in paths]
    base = [T._key(body) for body, _ in cases]
    out = {}
    print(f"{'transform':10} {'cases':>6} {'changed':>8} {'lost':>5} {'gained':>7}")
    for name, f in sorted(T.TRANSFORMS.items()):
        got = [T._key(f(body)) for body, _ in cases]
        lost = sum(g[0] != b[0] and b[0] == e for g, b, (_, e) in zip(got, base, cases))
        gained = sum(g[0] != b[0] and g[0] == e for g, b, (_, e) in zip(got, base, cases))
        out[name] = {"cases": len(cases), "changed": sum(g != b for g, b in zip(got, base)), "lost": lost, "gained": gained}
        print(f"{name:10} {len(cases):6} {out[name]['changed']:8} {lost:5} {gained:7}")
    save("triage_pasted", "python benchmarks/triage_pasted.py", {"transforms": out})
    return 0


if __name__ == "__main__":
    sys.exit(main())
