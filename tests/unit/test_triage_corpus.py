"""The corpus: logs modelled on public threads (tests/unit/corpus/*.log), each naming its thread and
the expected cause, runtime and numbers in its header. Every development log must be diagnosed
right; the held-out logs (corpus/holdout/, never tuned on) must reach 95 % top-1 and exact numbers."""
import re
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine as triage
from gpu_garden.memory.units import parse_size

CORPUS = Path(__file__).parent / "corpus"
DEV = sorted(CORPUS.glob("*.log"))
HOLDOUT = sorted((CORPUS / "holdout").glob("*.log"))


def load(path: Path):
    text = path.read_text(encoding="utf-8")
    header, body = [], []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and lines[i].startswith("# ") and re.match(r"# (thread|note|expect|numbers):", lines[i]):
        header.append(lines[i][2:].strip())
        i += 1
    body = "".join(lines[i:])
    meta = {}
    for h in header:
        key, _, val = h.partition(":")
        meta[key] = val.strip()
    assert meta.get("thread", "").startswith("https://github.com/"), f"{path.name}: names no public thread"
    expect = dict(kv.split("=", 1) for kv in meta["expect"].split())
    numbers = {}
    for item in filter(None, (x.strip() for x in meta.get("numbers", "").split(";"))):
        k, v = item.split("=", 1)
        numbers[k.strip()] = parse_size(v.strip(), binary_decimal=True)
    return body, expect, numbers


# A log's head (its first 4 MiB) is read line by line; after it only anchor lines are, with the context
# before each failure read back. The same log behind 4.5 MB of unrelated lines must triage the same.
PADDING = ("INFO 06-28 23:40:03 [logger.py:39] Received request chatcmpl-5e0b: prompt: 'Summarise', params: SamplingParams(n=1)\n"
           "INFO:     127.0.0.1:52144 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
           "srv  log_server_r: request: POST /completion 127.0.0.1 200\n") * 24000


def check(path: Path, pad: bool = False):
    body, expect, numbers = load(path)
    res = triage.triage_text(PADDING + body if pad else body)
    problems = []
    if not res["found"]:
        return ["no OOM found"]
    ev = res["events"][-1]
    if res["cause"] != expect["cause"]:
        problems.append(f"cause {res['cause']} != {expect['cause']} ({[(c['id'], c['confidence']) for c in ev['causes']]})")
    if expect.get("runtime") and ev["runtime"] != expect["runtime"]:
        problems.append(f"runtime {ev['runtime']} != {expect['runtime']}")
    for k, v in numbers.items():
        if ev["numbers"].get(k) != v:
            problems.append(f"{k}: {ev['numbers'].get(k)} != {v}")
    return problems


def test_corpus_is_there():
    assert len(DEV) >= 25 and len(HOLDOUT) >= 20


@pytest.mark.parametrize("path", DEV, ids=[p.name for p in DEV])
def test_development_log(path):
    assert check(path) == []


def _verdict(res):
    ev = res["events"][-1] if res["events"] else {}
    return (res["cause"], ev.get("runtime"), ev.get("numbers"), [c["id"] for c in ev.get("causes", [])], ev.get("platform"),
            [c["evidence"] for c in ev.get("causes", [])])


@pytest.mark.parametrize("path", DEV + HOLDOUT, ids=[p.name for p in DEV + HOLDOUT])
def test_same_diagnosis_after_the_head(path):
    # after the head the scanner reads only error lines until a failure opens, and reads the rest back from
    # the window before it: every cause, its evidence, the runtime, the platform and the numbers stay the same
    from gpu_garden.memory.triage import scan
    assert len(PADDING) > 4 * scan.HEAD
    body = load(path)[0]
    assert _verdict(triage.triage_text(PADDING + body)) == _verdict(triage.triage_text(body))


ALL_LOGS = sorted(CORPUS.rglob("*.log"))


def test_error_words_cover_every_line_a_recogniser_matches():
    # the idle scan and recognise() look only at lines holding one of parse.ERROR_WORDS: a recogniser whose
    # lines hold none of them would never fire after a log's head
    from gpu_garden.memory.triage import parse as P
    missed = []
    for path in ALL_LOGS:
        for line in load(path)[0].splitlines():
            hits = [rec(line) for rec in P.RECOGNISERS]
            if any(hits) and not any(w in line for w in P.ERROR_WORDS):
                missed.append((path.name, next(h for h in hits if h)["kind"], line[:120]))
    assert len(ALL_LOGS) >= 60
    assert not missed


def test_holdout_accuracy(capsys):
    results = {p.name: check(p) for p in HOLDOUT}
    body_ok = [n for n, probs in results.items() if not any(p.startswith("cause") or p == "no OOM found" for p in probs)]
    numbers_bad = {n: probs for n, probs in results.items() if any(":" in p and not p.startswith(("cause", "runtime")) for p in probs)}
    acc = len(body_ok) / len(results)
    with capsys.disabled():
        print(f"\nheld-out top-1 cause accuracy: {len(body_ok)}/{len(results)} = {acc:.0%}")
        for n, probs in results.items():
            if probs:
                print(f"  {n}: {'; '.join(probs)}")
    assert acc >= 0.95
    assert not numbers_bad
