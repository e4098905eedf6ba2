"""The rounds' linear-time guard: each reader or regex runs on 1 MB adversarial strings well under a second of CPU. A
backtracking blow-up takes minutes there, so the bound catches it without timing anything close. The clock is the
calling thread's CPU time (time.thread_time), not the process's: a thread another test left running (a budget poller,
torch's pool) is counted by process_time: in one CI run a search that takes 0.14 s here read 1.2 s."""
import time


def assert_each_fast(cases, limit: float = 1.0):
    """cases: (callable, texts) pairs; each callable on each text within `limit` CPU seconds."""
    for fn, texts in cases:
        for text in texts:
            t = time.thread_time()
            fn(text)
            assert time.thread_time() - t < limit, fn
