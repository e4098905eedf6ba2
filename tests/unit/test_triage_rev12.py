"""rev12 B1 and S1 (session 46, fix13): SGLang's attention-backend row (server_predicates.sglang_attn_init) counts a
traceback of a chain where its own closing exception line is an OOM line (facts._chained_how reads it back from the
separator), where it is the last, or where "direct cause" links it to one that counts.

B1: the usual wrapper, `except X: raise Y(...)` with no `from`, prints "During handling of the above exception"; the OOM
is the earlier traceback's (fix12 read only "direct cause" links and lost it). S1: the separator is read through a
container's "name  | " prefix and past another rank's log line."""
from support.triage_event import top
from test_triage_fix11 import OWN, SG, SG_OOM, WRAP, _attn
from test_triage_rev11 import DURING, IMPORT_FAIL, TP1

# test_triage_fix11's WRAP with its separator changed to "During handling" and `from e` removed
WRAP_DURING = WRAP.replace("The above exception was the direct cause of the following exception:",
                           "During handling of the above exception, another exception occurred:").replace(" from e\n", "\n")


def test_sglang_attention_oom_wrapped_during_handling_read():
    for text in (OWN + WRAP_DURING, TP1 + OWN + WRAP_DURING):     # alone, and after another rank's OOM line
        cause, conf, ev = top(text)
        assert ev["runtime"] == "sglang"
        assert cause == "other" and _attn(ev), conf               # was "activations", no attention-backend evidence


def _compose(text):
    return "".join("sglang-1  | " + line + "\n" for line in text.splitlines())


def test_sglang_attention_chain_read_through_prefixes():
    # rev11's false positive (an ImportError in the backend's __init__, the OOM raised while it was handled) with every line
    # under docker compose's prefix, and with another rank's log line between the separator and the traceback
    rank_line = DURING.replace("\n\nTraceback", "\n\n[2026-01-01 00:00:01 TP1] Load weight end.\nTraceback", 1)
    for text in (_compose(TP1 + IMPORT_FAIL + DURING), TP1 + IMPORT_FAIL + rank_line):
        cause, conf, ev = top(text)
        assert ev["runtime"] == "sglang"
        assert not _attn(ev) and cause != "other", conf           # was "other", the attention backend's workspace
    # the backend's own OOM wrapped as in B1 under the same prefix: still read
    cause, conf, ev = top(_compose(TP1 + OWN + WRAP_DURING))
    assert cause == "other" and _attn(ev), conf


def test_chained_traceback_cuts_capped():
    # (S1) a failure that stays open over 100 chained tracebacks keeps the cut and the link of the first MAX_FRAMES (80)
    from gpu_garden.memory.triage import scan as S
    sc = S.Scan()
    one = f'Traceback (most recent call last):\n  File "{SG}managers/scheduler.py", line 40, in f\n    g()\n' + SG_OOM
    sc.feed_text(TP1 + "\nThe above exception was the direct cause of the following exception:\n\n".join([one] * 100))
    (tf,), (th,) = sc.facts["trace_from"].values(), sc.facts["trace_how"].values()
    assert len(tf) == len(th) == 80                                 # was 100 each
    assert tf[:3] == [0, 1, 2] and th[:2] == [("", False), ("cause", True)]   # TP1's line is another rank's: not read


def test_rev12_line_readers_linear():
    from support.regex_time import assert_each_fast
    from gpu_garden.memory.triage import chain_links as F
    n = 1 << 20
    texts = [b"a" * n, b"a " * (n // 2), b"a" * 64 + b" " * n, b"2026-01-01T" + b"0" * n, b"Jan 01 00:00:00 " + b"x" * n,
             b"Jan 01 00:00:00 h " + b"a" * n, b"[" + b"TP1 " * (n // 4), b"out of " * (n // 7)]
    assert_each_fast([(F._LINE_PREFIX.match, texts), (F._RANK_LOG.match, texts), (F._EXC_TYPE.match, texts)])
