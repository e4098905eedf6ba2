"""fix10t: the TRIAGE findings left open by rev9 (S1, D1-D5), rev6 (S1, S2) and rev8 (D9), with inputs written by hand from
the runtimes' message forms and the expected values worked out by hand.

1. (rev9 S1) A sweep's "batch size N successful." line speaks only for a failure after it: a line after the failure (a
   retry that then ran) no longer reads activations, and the message names the last size before the failure; "batch size
   16 fits" (an estimate) is no such line."""
from support.regex_time import assert_each_fast
from support.triage_event import top
from gpu_garden.memory.triage.fact_patterns import FACTS

G = 1 << 30

TORCH_OOM_OLD = ("exception <class 'RuntimeError'> : CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 7.80 GiB total "
                 "capacity; 7.50 GiB already allocated; 40.00 MiB free; 70.00 MiB cached)\n")


# 1. (rev9 S1) the sweep line by line
def test_batch_ran_after_the_failure_is_not_read():
    text = "INFO: GPU memory: 300.0\n" + TORCH_OOM_OLD + "INFO: retrying\nINFO: batch size 2 successful.\n"
    cause, conf, _ = top(text)
    assert cause != "activations", conf       # as with no sweep line (test_triage_round118): the card reads full


def test_batch_ran_message_names_the_size_before_the_failure():
    text = ("INFO: batch size 4 successful.\nINFO: batch size 8 successful.\n" + TORCH_OOM_OLD
            + "INFO: batch size 2 successful.\n")
    cause, conf, ev = top(text)
    assert cause == "activations", conf
    msgs = [e for c in ev["causes"] if c["id"] == "activations" for e in c.get("evidence", [])]
    assert any("batch size 8 ran before this failure" in str(m) for m in msgs), msgs
    assert not any("batch size 2 ran" in str(m) for m in msgs), msgs


def test_batch_fits_is_an_estimate_not_a_run():
    fact = dict(FACTS)["batch_ran"]
    assert fact.search("planner: batch size 16 fits") is None
    assert fact.search("INFO: batch size 16 successful.").group(1) == "16"
    assert fact.search("batch_size=16 passed").group(1) == "16"


def test_fix10t_patterns_linear():
    n = 1 << 20
    assert_each_fast([
        (dict(FACTS)["batch_ran"].search, ["batch size " * (n // 11), "batch size 1 " + " " * n, "batch_size=" + "1" * n,
                                           "batch size 1 is " * (n // 16)]),
    ])
