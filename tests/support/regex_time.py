"""The rounds' linear-time guard: each reader or regex runs on 1 MB adversarial strings well under a second of CPU. A
backtracking blow-up takes minutes there, so the bound catches it without timing anything close. The clock is the
calling thread's CPU time (time.thread_time), not the process's: a thread another test left running (a budget poller,
torch's pool) is counted by process_time: in one CI run a search that takes 0.14 s here read 1.2 s.

Each bound is written for the machine the rounds were tuned on and scaled by `machine_factor()`: how much slower this
machine runs a fixed backtracking search than that one (never below 1). CI's runners ran the same searches 6-8x slower in
thread CPU time (a 0.17 s search read 1.1 s), so fixed bounds failed there while a blow-up stays 10^5x past any of them."""
import functools
import re
import time

# the reference search: a linear but backtracking-heavy pattern (the shape of the device-name reader) on 256 KB;
# REF_S is its best-of-5 thread CPU time on the tuning machine (0.025 s, session 49)
_REF_RX = re.compile(r"x \(((?:[^()]|\([^()]*\))*)\) y")
_REF_TEXT = "x (" + "a" * (1 << 18)
REF_S = 0.025


@functools.lru_cache(maxsize=1)
def machine_factor() -> float:
    best = min(_timed(_REF_RX.search, _REF_TEXT) for _ in range(5))
    return max(1.0, best / REF_S)


def cpu_limit(seconds: float) -> float:
    """A bound written for the tuning machine, scaled to this one."""
    return seconds * machine_factor()


def _timed(fn, text) -> float:
    t = time.thread_time()
    fn(text)
    return time.thread_time() - t


def assert_each_fast(cases, limit: float = 1.0):
    """cases: (callable, texts) pairs; each callable on each text within `limit` CPU seconds (scaled to this machine)."""
    bound = cpu_limit(limit)
    for fn, texts in cases:
        for text in texts:
            assert _timed(fn, text) < bound, fn
