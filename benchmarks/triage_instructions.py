"""Instructions (valgrind callgrind, millions per MB) that triage's log scan spends on bench_triage's generated logs.

Wall time on a shared machine swings several times over; an instruction count does not, so a change to the scan
is compared by this count on two `git archive` copies, and bench_triage.py gives the seconds on a quiet machine.

    python benchmarks/triage_instructions.py ROOT [--mb 10] [--logs easy tracebacks vllm_info progress_bars training]

ROOT: a copy of the package (e.g. `git archive COMMIT | tar -x -C ROOT`). The logs are written at bench_triage's
own density (its --mb 100 failure count, scaled to --mb) under a temporary folder, and each count is the run on MB of a
log less the same run on an empty log (the import and the engine's setup). Needs valgrind.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN = """
import importlib.util, io, sys
root, path, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = importlib.util.spec_from_file_location('gpu_garden', root + '/__init__.py', submodule_search_locations=[root])
m = importlib.util.module_from_spec(s); sys.modules['gpu_garden'] = m; s.loader.exec_module(m)
from gpu_garden.memory.triage import engine
data = open(path, 'rb').read()[:int(mb * 1e6)] if path else b''
engine.triage_stream(io.BytesIO(b'x\\n'))
engine.triage_stream(io.BytesIO(data))
"""


def instructions(root: str, path: str, mb: float) -> int:
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", RUN,
                          root, path, str(mb)], capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    for line in out.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise SystemExit(f"valgrind gave no count: {out.stderr[-500:]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("--mb", type=float, default=10.0)
    ap.add_argument("--logs", nargs="+", default=None, help="bench_triage log keys (default: the timed logs)")
    a = ap.parse_args(argv)
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not installed")
    sys.path.insert(0, str(HERE))
    import bench_triage as b

    tmp = Path(tempfile.mkdtemp(prefix="gg_instr_"))
    try:
        base = instructions(a.root, "", 0)
        for name, blocks, ooms, timed, share in b.LOGS:
            key = b.KEYS[name]
            if (a.logs and key not in a.logs) or (not a.logs and not timed):
                continue
            p = tmp / f"{key}.log"
            # bench_triage's density: its --mb 100 log's failures over the first MB read here
            size = b._write(p, a.mb * share, blocks, max(1, round(ooms * a.mb / 100)) if ooms else 0,
                            long_line=name == "easy mixed log")
            mb = min(a.mb, size / 1e6)         # a log bench_triage writes smaller (share < 1) is read whole
            n = instructions(a.root, str(p), mb)
            print(f"{key:16} {(n - base) / 1e6 / mb:10.0f} M instructions per MB ({mb:g} MB)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
