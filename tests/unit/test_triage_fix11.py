"""fix11 (rev10 S1): SGLang's attention-backend row tests each traceback of a chain on its own. A real attention-backend
OOM (init_attention_backend -> a backend's __init__ -> the OOM) that a wrapper re-raises ("The above exception was the
direct cause of the following exception:", then the scheduler's traceback) kept only the last traceback's frames before,
whose innermost SGLang frame is the scheduler's, so the row was lost; fix10t's false positive (a fallback's __init__ in
the chained traceback, init_attention_backend only in the first) stays out (test_triage_fix10t)."""
from support.triage_event import top

SG = "/opt/sglang/python/sglang/srt/"
SG_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.50 GiB "
          "of which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.30 GiB memory in use. Of the "
          "allocated memory 22.00 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.\n")
OWN = ("[2026-01-01 00:00:00 TP0] Traceback (most recent call last):\n"
       f'  File "{SG}model_executor/model_runner.py", line 10, in init_attention_backend\n'
       "    self.attn_backend = FlashInferAttnBackend(self)\n"
       f'  File "{SG}layers/attention/flashinfer_backend.py", line 30, in __init__\n    self.ws = torch.empty(n)\n' + SG_OOM)
WRAP = ("\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n"
        f'  File "{SG}managers/scheduler.py", line 40, in run_scheduler_process\n    scheduler = Scheduler(args)\n'
        f'  File "{SG}managers/scheduler.py", line 50, in __init__\n    raise RuntimeError("init failed") from e\n'
        "RuntimeError: init failed\n")


def _attn(ev):
    return [e for c in ev["causes"] if c["id"] == "other" for e in c["evidence"] if "attention backend" in e]


def test_sglang_attention_init_read_in_its_own_traceback_of_a_chain():
    _, conf, ev = top(OWN)                 # one traceback: read (as before)
    assert ev["runtime"] == "sglang" and _attn(ev), conf
    cause, conf, ev = top(OWN + WRAP)      # the same, re-raised by the scheduler's wrapper: still read
    assert cause == "other" and _attn(ev), conf
