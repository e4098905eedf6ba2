"""(fix67g, rev67b F1) The vLLM run that failed, where one log holds several: a user who fixes a failed start and runs
`vllm serve` again pastes both runs, and the second run's flags and start-up figures (its utilization, --max-model-len,
--max-num-seqs, "Available KV cache memory", "GPU KV cache size") are not the first one's.

The facts keep these by line (`<key>_at`, as facts.py keeps vllm_util_at); a failure reads, for each, the value printed
nearest before it since its run's own `vllm serve` line, else (a paste quoting the start-up after its error) the first
printed after it and before the next run's `vllm serve` line or the next failure. With one `vllm serve` line or none the
whole log is one run and the facts stay as read (the last value printed). The utilization and --max-model-len are read by
line in every log (rev8 B1: vllm_setting), as the numbers have always shown them."""
import copy

from . import parse as P

RUN_KEPT = 16       # values kept by line for each key (facts.LINE_KEPT's bound): the last this many
KEPT = ("vllm_own", "vllm_kv_mem", "vllm_kv_tokens", "vllm_model_mem", "vllm_kv_dtype")
RUN_AT = ("vllm_own_at", "vllm_util_at", "vllm_maxlen_at") + tuple(k + "_at" for k in KEPT[1:])     # every run-bound key
PINNED_RUNS = 32    # (fix68a, rev67i #4) failed runs whose values are kept past RUN_KEPT later runs: the last this many


def keep(f, key, value, lineno, window, s) -> None:
    """Set fact `key` (the last value, as before) and keep it by line; a line read back from the window before a failure
    (line 0) is kept just before that failure's line (facts._vllm_util's rule)."""
    f[key] = value
    d = f.setdefault(key + "_at", {})
    d[s._lineno - 0.5 if window else lineno] = value
    while len(d) > RUN_KEPT:
        del d[next(iter(d))]


def gib(key):
    """A handler for a fact of "N GiB" kept by line (vllm_kv_mem, vllm_model_mem)."""
    def handler(s, f, m, text, lineno, window):
        keep(f, key, P.size(m.group(1) + " GiB"), lineno, window, s)
    return handler


def kv_tokens(s, f, m, text, lineno, window):
    keep(f, "vllm_kv_tokens", int(m.group(1).replace(",", "")), lineno, window, s)


def kv_dtype(s, f, m, text, lineno, window):
    keep(f, "vllm_kv_dtype", (m.group(1) or m.group(2)).lower(), lineno, window, s)


def pin(s, f, at=None) -> None:
    """(fix68a, rev67i #4) A new run starts at line `at` (a line read in order): where a failure lay in the run before it,
    that run's values are kept aside (facts "vllm_pinned", key -> {line: value}), so 16 later runs no longer push its flags
    and figures out of the last RUN_KEPT. Bounded: PINNED_RUNS runs of at most RUN_KEPT values a key. (fix68h, rev68a #1)
    The new run's start is kept with it (no flags) as the pinned run's end: else, once the later starts are pushed out,
    the pinned run reaches to the next one kept and reads a later run's utilization or KV figures as its own."""
    starts = f.get("vllm_own_at") or {}
    if not starts:
        return
    prev = max(starts)
    if not failed_since(s, prev):
        return
    runs = f.setdefault("vllm_pinned", {})
    runs[prev] = {key: {n: v for n, v in (f.get(key) or {}).items() if n >= prev} for key in RUN_AT}
    if at is not None:
        runs[prev]["vllm_own_at"][at] = {}
    while len(runs) > PINNED_RUNS:
        del runs[next(iter(runs))]


def failed_since(s, at) -> bool:
    """A failure (the open one or the last closed) lay at or after line `at`."""
    lasts = [inc.last_line for inc in (getattr(s, "cur", None), (getattr(s, "incidents", None) or [None])[-1]) if inc]
    return any(n >= at for n in lasts)


def kept_at(f, key) -> dict:
    """The values kept by line for `key`, with those of the failed runs kept aside (pin)."""
    out = {}
    for run in (f.get("vllm_pinned") or {}).values():
        out.update(run.get(key) or {})
    out.update(f.get(key) or {})
    return out


def vllm_setting(kept: dict, at: int, until=None):
    """(rev8 B1) A vLLM setting kept by line (facts "vllm_util_at", "vllm_maxlen_at"; (rev9 D3) "tpu_hbm_limit") for a failure
    at line `at`: the nearest value printed at or before it, else the first printed after it and before the next failure
    (`until`), else None. (rev9 D2, left) No lower bound at the failure before it, as monai's reader has: vLLM prints one
    failure several times (EngineCore's ERROR lines, its stderr, the API server's), so the failure before is often this one's
    own first print, and its run's settings lie before that (batch-614's sampler warm-up lost its max_model_len)."""
    lines = sorted(kept)
    before = [n for n in lines if n <= at]
    return kept[before[-1]] if before else next((kept[n] for n in lines if at < n < (until or 1 << 60)), None)


def bounds(f, at, until=None) -> tuple:
    """(start, stop) of the run that failed at line `at`: its `vllm serve` line (None: none before it) and the next run's
    line or the next failure, whichever comes first (None: neither)."""
    starts = sorted(kept_at(f, "vllm_own_at"))
    start = next((n for n in reversed(starts) if n <= at), None)
    stop = min((n for n in (next((n for n in starts if n > at), None), until) if n is not None), default=None)
    return start, stop


def in_run(kept: dict, at, start, stop):
    """The value printed nearest before `at` since `start`, else the first after `at` before `stop`, else None."""
    lines = sorted(kept)
    before = [n for n in lines if n <= at and (start is None or n >= start)]
    if before:
        return kept[before[-1]]
    return next((kept[n] for n in lines if at < n and (stop is None or n < stop)), None)


def sized_before(f, at) -> bool:
    """vLLM printed its KV cache's size before the failure at `at` and after its run's `vllm serve` line: a capture after
    it ran once the cache had its share (vLLM >= 0.20 also captures inside the profile, before any KV line)."""
    start, _ = bounds(f, at)
    return any(n <= at and (start is None or n >= start)
               for key in ("vllm_kv_mem_at", "vllm_kv_tokens_at") for n in kept_at(f, key))


def run_setting(f, key, at, until=None):
    """(fix67o, rev67i #1) A setting kept by line (`key`: "vllm_util_at", "vllm_maxlen_at") for the failure at `at`: with two
    or more `vllm serve` lines, only within the failing run's bounds (a run that printed none gets None, vLLM's default,
    not the next run's value); else vllm_setting's nearest."""
    if len(kept_at(f, "vllm_own_at")) > 1:
        return in_run(kept_at(f, key), at, *bounds(f, at, until))
    kept = f.get(key) or {}
    return vllm_setting(kept, at, until)


def run_facts(f, at, until=None) -> dict:
    """The facts with the failed run's values (a copy; `f` itself where nothing differs)."""
    util, maxlen = run_setting(f, "vllm_util_at", at, until), run_setting(f, "vllm_maxlen_at", at, until)
    several = len(kept_at(f, "vllm_own_at")) > 1
    if not several and (util is None or util == f.get("vllm_util")) and (maxlen is None or maxlen == f.get("vllm_maxlen")):
        return f
    out = dict(f)
    if util is not None or several:
        out["vllm_util"] = util
    if maxlen is not None or several:
        out["vllm_maxlen"] = maxlen
    if several:
        start, stop = bounds(f, at, until)
        for key in KEPT:
            v = in_run(kept_at(f, key + "_at"), at, start, stop)
            out[key] = v if v is not None else ({} if key == "vllm_own" else None)
    return out


def scan_for(scan, at, until=None):
    """The scan as the failed run's guide and numbers read it: its facts those of the run that failed."""
    f = run_facts(scan.facts, at, until)
    if f is scan.facts:
        return scan
    out = copy.copy(scan)
    out.facts = f
    return out


def own(s, f, m, text, lineno, window):
    """The "vllm_own" fact's handler: the run's own flags (vllm_own_flags.seen), kept by line, each line a run's start."""
    from .vllm_own_flags import seen
    from .vllm_launch import background
    if not window:
        pin(s, f, lineno)
    seen(f, m)
    f["vllm_serve_bg"] = background(m.group(2))     # (fix68a) a later `python x.py` is then a client, no new run
    f["vllm_serve_open"] = None if f["vllm_serve_bg"] else s._lineno - 0.5 if window else lineno     # (fix68h) till it ends
    keep(f, "vllm_own", f["vllm_own"], lineno, window, s)
