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


# S3: ggml's allocation line with its status after 1-17 spaces or tabs (a terminal's cut joined back keeps the indent), and
# ggml-cann's status on a line of its own, joined as the CUDA form is
M = 1 << 20


def test_ggml_malloc_spaced_one_line_read():
    from support.triage_event import read
    line = "load: allocating 121.50 MiB on device 0:  cudaMalloc failed: out of memory"
    cause, kind, runtime, device, nums = read(line)                         # (no newline: paste's steps need two lines)
    assert (kind, runtime, device) == ("ggml.malloc", "llama.cpp", "cuda")
    assert nums.get("requested") == int(121.5 * M)                         # 127401984 bytes; was no request (the bare status)
    _, kind, _, _, nums = read("x: allocating 9.00 MiB on device 2:\tcudaMalloc failed: out of memory")
    assert kind == "ggml.malloc" and nums.get("requested") == 9 * M
    # 17 is the most: a line with 18 spaces there is read by the bare status alone (no request)
    assert read("x: allocating 9.00 MiB on device 2:" + " " * 18 + "cudaMalloc failed: out of memory\n")[4].get("requested") is None


CANN = ("ggml_backend_cann_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0:\n"
        "    aclrtMalloc failed: EL0004: The memory pool is insufficient\n")


def test_ggml_cann_status_on_next_line_joined():
    from support.triage_event import read
    from gpu_garden.memory.triage import paste
    joined = paste.undo(CANN.encode()).decode()
    assert "allocating 8192.00 MiB on device 0: aclrtMalloc failed: EL0004" in joined
    _, kind, runtime, device, nums = read(CANN)
    assert (kind, runtime, device) == ("ggml.malloc", "llama.cpp", "npu")
    assert nums.get("requested") == 8192 * M                               # 8 GiB


def test_rev11_ggml_patterns_linear():
    from support.regex_time import assert_each_fast
    from gpu_garden.memory.triage import error_patterns as RX
    from gpu_garden.memory.triage.paste import _GGML_STATUS_OPEN
    n = 1 << 20
    texts = ["allocating " * (n // 11), "allocating " + "1." * (n // 2), "allocating 1 MiB on device " + "1" * n,
             "allocating 1 MiB on device 1:" + " \t" * (n // 2) + "x", "allocating 1 MiB on device 1:" * (n // 29),
             ("allocating 1 MiB on device 1:" + " " * 17) * (n // 46)]
    assert_each_fast([(RX.GGML_MALLOC.search, texts), (RX.GGML_CANN_MALLOC.search, texts),
                      (_GGML_STATUS_OPEN.match, [b" " * n + b"aclrtMalloc failed", b"aclrtMalloc " * (n // 12)])])
