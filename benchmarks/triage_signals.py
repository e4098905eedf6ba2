"""Which evidence the logs of a confusion show: for each of the named confusions (expected -> got), the misses beside the
hits of both causes, and how many of each show a signal. A study aid for a tuning round (docs/triage-accuracy.md,
round 54); it changes nothing and writes no results file.

    python benchmarks/triage_signals.py --through batch-97
    python benchmarks/triage_signals.py --through batch-97 --pair other:activations --list

--through is required: batches after it are never opened (a later batch may still be unseen). Signals are read from the
log's text (the header lines apart) and from the numbers triage extracted (requested, total, allocated, reserved):
  bare     the message alone: at most 3 non-empty lines and no traceback frame
  frames   a Python traceback frame (File "...", line N)
  load     a loading step named: load_state_dict, from_pretrained, .to(...)/_apply, load_models_gpu, "Loading ..." lines
  forward  a forward or sampling step named: forward, __call__, sample, generate, decode, attention, denoise
  train    a training step named: backward, optimizer, epoch, loss
  repeat   an earlier run finished or a repeat named: "Prompt executed", "generated in", "second", "again", "every"
  version  a version line: "version", vN.N.N, a +cuNNN build tag
  multi    more than one GPU named: GPU/device/cuda index above 0, CUDA_VISIBLE_DEVICES, nproc_per_node, tensor parallel
  full     PyTorch's allocated is 85 % of the card or more
  slack    reserved-but-unallocated is at least the request
  big      the request is half the card or more
"""
import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import conftest  # noqa: E402,F401  (loads the repo as gpu_garden)
from support import unseen_corpus as U  # noqa: E402

TEXT = {
    "frames": r'File ".*", line \d+',
    "load": r"load_state_dict|from_pretrained|load_models_gpu|_load_from_state_dict|load_checkpoint|load_model|\.to\(|"
            r"in _apply|in convert|load_unet|load_diffusion_model|Loading (checkpoint|model|weights)|loading model|load_tensors",
    "forward": r"in forward|in _forward|in __call__|in sample|sampling|in generate|in decode|attention|denoise|in predict",
    "train": r"\bepoch|backward|optimizer|\bloss\b",
    "repeat": r"Prompt executed|generated in|second (time|run|generation)|\bagain\b|every (time|run|other)",
    "version": r"\bversion\b|\bv\d+\.\d+\.\d+|\+cu\d{3}",
    "multi": r"GPU [1-9]\b|cuda:[1-9]|device [1-9]\b|CUDA_VISIBLE_DEVICES=\S*,|nproc_per_node|tensor[_-]parallel",
}
SIGNALS = ["bare", *TEXT, "full", "slack", "big"]
PAIRS = ("other:activations", "weights-exceed-vram:activations", "activations:weights-exceed-vram")


def signals(path: Path) -> set:
    body, _, _, _ = U.load(path)
    from gpu_garden.memory.triage import engine
    out = {k for k, p in TEXT.items() if re.search(p, body, re.I)}
    if len([ln for ln in body.splitlines() if ln.strip()]) <= 3 and "frames" not in out:
        out.add("bare")
    res = engine.triage_text(body)
    n = res["events"][-1]["numbers"] if res["found"] else {}
    req, total, alloc, resv = (n.get(k) for k in ("requested", "total", "allocated", "reserved"))
    if total and alloc is not None and alloc >= 0.85 * total:
        out.add("full")
    if req and alloc is not None and resv is not None and resv - alloc >= req:
        out.add("slack")
    if req and total and req >= 0.5 * total:
        out.add("big")
    return out


def _batch(text: str) -> int:
    """--through's batch-NN (or NN) as its number; anything else is a usage error, not a traceback."""
    if not re.fullmatch(r"(?:batch-)?\d{1,4}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a batch (batch-NN)")
    return int(text.rsplit("-", 1)[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--through", required=True, type=_batch, metavar="BATCH", help="the last batch to read (batch-NN)")
    ap.add_argument("--pair", action="append", metavar="EXPECTED:GOT", help="a confusion to tabulate (default: the three largest of round 54)")
    ap.add_argument("--list", action="store_true", help="also list each miss of the pairs with its signals")
    a = ap.parse_args(argv)
    last = a.through
    rows = []
    for b, files in U.batches().items():
        if U.batch_number(b) > last:
            continue
        for f in files:
            r = U.score(f)
            r.update(batch=b, signals=signals(f))
            rows.append(r)
    print(f"{len(rows)} cases through batch-{a.through:02d}, {sum(r['cause_ok'] for r in rows)} right")
    head = f"{'group':44} {'n':>4} " + " ".join(f"{s:>7}" for s in SIGNALS)
    for pair in a.pair or PAIRS:
        exp, got = pair.split(":")
        groups = [(f"{exp} right", [r for r in rows if r["expect"] == exp and r["cause_ok"]]),
                  (f"{exp} -> {got} (misses)", [r for r in rows if r["expect"] == exp and r.get("got") == got]),
                  (f"{got} right", [r for r in rows if r["expect"] == got and r["cause_ok"]])]
        print("\n" + head)
        for name, g in groups:
            print(f"{name:44} {len(g):4} " + " ".join(f"{sum(s in r['signals'] for r in g):7}" for s in SIGNALS))
        if a.list:
            for r in groups[1][1]:
                print(f"    {r['batch']} {r['case'][:80]}: {' '.join(s for s in SIGNALS if s in r['signals']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
