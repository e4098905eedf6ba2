"""rev11 S1 and S3 (session 46, fix12): the triage items of review rev11.

S1: SGLang's attention-backend row (server_predicates.sglang_attn_init) reads an earlier traceback of a chain only where
it is linked to the ones after it by "The above exception was the direct cause" (the OOM re-raised); after "During
handling of the above exception" the exception raised is the later traceback's own."""
from support.triage_event import top

SG = "/opt/sglang/python/sglang/srt/"
SG_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.50 GiB "
          "of which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.30 GiB memory in use. Of the "
          "allocated memory 22.00 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.\n")
# the backend's __init__ under init_attention_backend fails on an import, not on memory
IMPORT_FAIL = ("[2026-01-01 00:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
               f'  File "{SG}model_executor/model_runner.py", line 10, in init_attention_backend\n'
               "    self.attn_backend = FlashInferAttnBackend(self)\n"
               f'  File "{SG}layers/attention/flashinfer_backend.py", line 30, in __init__\n    import flashinfer\n'
               "ImportError: cannot import name 'BatchPrefillWithPagedKVCacheWrapper' from 'flashinfer'\n")
# while that was handled, the scheduler's CUDA-graph capture ran out of memory: the OOM is this traceback's
DURING = ("\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n"
          f'  File "{SG}managers/scheduler.py", line 40, in fallback\n    self.init_cuda_graphs()\n'
          f'  File "{SG}model_executor/cuda_graph_runner.py", line 20, in capture\n    out = torch.empty(n)\n' + SG_OOM)
# another rank's OOM printed first keeps the failure open, so the whole chain is in its frames (its cuts in trace_from)
TP1 = "[2026-01-01 00:00:00 TP1] " + SG_OOM


def _attn(ev):
    return [e for c in ev["causes"] if c["id"] == "other" for e in c["evidence"] if "attention backend" in e]


def test_sglang_attention_init_not_read_from_a_traceback_handled_before_the_oom():
    cause, conf, ev = top(TP1 + IMPORT_FAIL + DURING)
    assert ev["runtime"] == "sglang"
    assert not _attn(ev) and cause != "other", conf           # was "other" 0.43, the attention backend's workspace
    # the same import failure re-raised as the direct cause of a backend OOM traceback: that last traceback is read
    own = (f'Traceback (most recent call last):\n  File "{SG}model_executor/model_runner.py", line 10, in init_attention_backend\n'
           f'    self.attn_backend = TritonAttnBackend(self)\n  File "{SG}layers/attention/triton_backend.py", line 20, '
           "in __init__\n    self.ws = torch.empty(n)\n" + SG_OOM)
    cause, conf, ev = top(TP1 + IMPORT_FAIL + "\nDuring handling of the above exception, another exception occurred:\n\n" + own)
    assert cause == "other" and _attn(ev), conf
