"""The rounds' linear-time guard: each reader or regex runs on 1 MB adversarial strings well under a second of CPU. A
backtracking blow-up takes minutes there, so the bound catches it without timing anything close.

The clock is the calling thread's *user* CPU time (`cpu_now`): not the process's (another thread's work, a budget
poller or torch's pool, is not this search's), and not its system time. A backtracking search grows sre's stack, and
the kernel's page faults for it are system time: on one CI runner a 0.17 s search read 1.1 s of thread time, most of
it faults (session 49's review measured 8,705 minor faults in a 0.026 s search here, 30-75 % system time). A blow-up is
user time, so nothing the guard is for is lost.

Each bound is written for the machine the rounds were tuned on and scaled by `machine_factor()`: how much slower this
machine runs a fixed, CPU-bound search (no deep stack, no allocation) than that one, never below 1 and capped at
MAX_FACTOR, so a slow runner gets room while a blow-up (10^3-10^5x past a bound on 1 MB inputs) still fails. The factor
is measured once, when pytest prints its header (tests/conftest.py), and shown there."""
import functools
import re
import time

try:
    import resource
    _RUSAGE_THREAD = resource.RUSAGE_THREAD   # Linux
except (ImportError, AttributeError):
    resource = None

# the reference: a search that fails at every position of 5 MB without backtracking (a word boundary, then a letter);
# REF_S is its best-of-5 user CPU time on the tuning machine (session 49, with other work on its two cores)
_REF_RX = re.compile(r"\bq\w{3}z")
_REF_TEXT = "aaaa bbbb " * (1 << 19)
REF_S = 0.057
MAX_FACTOR = 10.0


def cpu_now() -> float:
    """User CPU seconds of the calling thread (time.thread_time, user and system, where the platform has no per-thread
    usage)."""
    if resource is not None:
        return resource.getrusage(_RUSAGE_THREAD).ru_utime
    return time.thread_time()


@functools.lru_cache(maxsize=1)
def reference_s() -> float:
    """This machine's best-of-5 user CPU time for the reference search."""
    return min(_timed(_REF_RX.search, _REF_TEXT) for _ in range(5))


def machine_factor() -> float:
    return min(MAX_FACTOR, max(1.0, reference_s() / REF_S))


def cpu_limit(seconds: float) -> float:
    """A bound written for the tuning machine, scaled to this one."""
    return seconds * machine_factor()


def _timed(fn, text) -> float:
    t = cpu_now()
    fn(text)
    return cpu_now() - t


def assert_each_fast(cases, limit: float = 1.0):
    """cases: (callable, texts) pairs; each callable on each text within `limit` CPU seconds (scaled to this machine)."""
    bound = cpu_limit(limit)
    for fn, texts in cases:
        for i, text in enumerate(texts):
            took = _timed(fn, text)
            assert took < bound, f"{fn}: text {i} ({len(text)} chars) took {took:.2f} s of user CPU, bound {bound:.2f} s " \
                                 f"({limit} s x machine factor {machine_factor():.2f})"


def header() -> str:
    f = machine_factor()
    return f"linear-time guards: machine factor {f:.2f} (reference search {reference_s():.3f} s of user CPU, {REF_S} s on " \
           f"the tuning machine; cap {MAX_FACTOR:g})"
