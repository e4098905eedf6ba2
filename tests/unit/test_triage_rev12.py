"""rev12 B1 and S1 (session 46, fix13): SGLang's attention-backend row (server_predicates.sglang_attn_init) counts a
traceback of a chain where its own closing exception line is an OOM line (facts._chained_how reads it back from the
separator), where it is the last, or where "direct cause" links it to one that counts.

B1: the usual wrapper, `except X: raise Y(...)` with no `from`, prints "During handling of the above exception"; the OOM
is the earlier traceback's (fix12 read only "direct cause" links and lost it)."""
from support.triage_event import top
from test_triage_fix11 import OWN, SG, SG_OOM
from test_triage_rev11 import DURING, IMPORT_FAIL, TP1

# test_triage_fix11's WRAP with its separator changed to "During handling" and `from e` removed
WRAP_DURING = ("\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n"
               f'  File "{SG}managers/scheduler.py", line 40, in run_scheduler_process\n    scheduler = Scheduler(args)\n'
               f'  File "{SG}managers/scheduler.py", line 50, in __init__\n    raise RuntimeError("init failed")\n'
               "RuntimeError: init failed\n")


def _attn(ev):
    return [e for c in ev["causes"] if c["id"] == "other" for e in c["evidence"] if "attention backend" in e]


def test_sglang_attention_oom_wrapped_during_handling_read():
    for text in (OWN + WRAP_DURING, TP1 + OWN + WRAP_DURING):     # alone, and after another rank's OOM line
        cause, conf, ev = top(text)
        assert ev["runtime"] == "sglang"
        assert cause == "other" and _attn(ev), conf               # was "activations", no attention-backend evidence
