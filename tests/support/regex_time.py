"""The rounds' linear-time guard: each reader or regex runs on 1 MB adversarial strings well under a second of CPU. A
backtracking blow-up takes minutes there, so the bound catches it without timing anything close."""
import time


def assert_each_fast(cases, limit: float = 1.0):
    """cases: (callable, texts) pairs; each callable on each text within `limit` CPU seconds."""
    for fn, texts in cases:
        for text in texts:
            t = time.process_time()
            fn(text)
            assert time.process_time() - t < limit, fn
