"""fix10t: the TRIAGE findings left open by rev9 (S1, D1-D5), rev6 (S1, S2) and rev8 (D9), with inputs written by hand from
the runtimes' message forms and the expected values worked out by hand.

1. (rev9 S1) A sweep's "batch size N successful." line speaks only for a failure after it: a line after the failure (a
   retry that then ran) no longer reads activations, and the message names the last size before the failure; "batch size
   16 fits" (an estimate) is no such line.
2. (rev9 D1, D2) D1 (one read of max_model_len for the start-up check and the rest) is covered by test_triage_round118's
   vLLM tests; D2 (a lower bound at the failure before) is left: vLLM prints one failure several times.
3. (rev9 D3) tpu-inference's HBM total by line: the statistics line before the failure, not one a later run printed.
4. (rev9 D4) llama.cpp Metal's "has unified memory    = false" names no unified memory.
5. (rev9 D5) XLA's cuFFT plan failure in TensorFlow's log is TensorFlow's; JAX's where its line or the log names JAX.
6. (rev6 S1; S2 was fix9's) nvidia-smi's compute-apps rows are read from their header, not anchored by " MiB": the rows on
   the lines right after the header are kept with their lines, up to the first line of another shape; " MiB" is no anchor.
7. (rev8 D9) SGLang's attention-backend row reads init_attention_backend and the innermost layers/attention __init__ in one
   traceback: a chained traceback after the failure (its fallback's __init__) no longer joins the failure's own frames."""
from support.regex_time import assert_each_fast
from support.triage_event import read, top
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


# 3. (rev9 D3) the TPU's HBM by line
def _tpu_stats(gib):
    return f"(EngineCore pid=7) INFO 01-01 00:00:00 [tpu_worker.py:1] Memory statistics | total_hbm_limit_gb={gib}GiB\n"


TPU_FAIL = ("(EngineCore pid=7) ERROR 01-01 00:00:00 [core.py:1] jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: E0101: "
            "RuntimeProgramAllocationFailure:\n(EngineCore pid=7) ERROR 01-01 00:00:00 [core.py:1] Error loading program "
            "'jit_step_fn': Attempting to reserve 100.00M at the bottom of memory. That was not possible. There are 50.00M "
            "free, 0B reserved, and 50.00M reservable.\n")


def test_tpu_total_is_the_statistics_before_the_failure():
    _, _, _, device, nums = read(_tpu_stats("31.25") + TPU_FAIL + "INFO retry on another host\n" + _tpu_stats("15.75"))
    assert device == "tpu" and nums["total"] == int(31.25 * G)          # was the later line's 15.75 GiB


# 4. (rev9 D4) unified memory = false
def test_unified_memory_false_is_not_named():
    fact = dict(FACTS)["igpu_named"]
    assert fact.search("ggml_metal_device_init: has unified memory    = false") is None
    assert fact.search("ggml_metal_device_init: has unified memory = 0") is None
    assert fact.search("ggml_metal_device_init: has unified memory    = true")
    assert fact.search("an integrated GPU shares unified memory with the CPU")


# 5. (rev9 D5) the FFT plan's runtime
FFT = "Failed to create cuFFT batched plan with scratch allocator\n"


def test_fft_plan_runtime_from_the_log():
    text = ("2021-03-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1418] Created TensorFlow device "
            "(/job:localhost/replica:0/task:0/device:GPU:0 with 10000 MB memory) -> physical GPU\n"
            "2021-03-01 10:00:05.000000: E tensorflow/stream_executor/cuda/cuda_fft.cc:223] " + FFT)
    cause, kind, runtime, device, _ = read(text)
    assert (cause, kind, runtime, device) == ("activations", "xla.oom", "tensorflow", "cuda")     # was jax
    assert read("jax.errors.JaxRuntimeError: INTERNAL: " + FFT)[2] == "jax"
    assert read("E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:223] " + FFT)[2] == "jax"     # nothing names TF


# 6. (rev6 S1) the compute-apps rows read from their header
def test_smi_rows_read_from_the_header_and_mib_is_no_anchor():
    from gpu_garden.memory.triage import lines as L
    from gpu_garden.memory.triage.scan import Scan
    assert b" MiB" not in L.HEAD_ANCHORS and b" MiB" not in L.OPEN_ANCHORS
    log = ("load_tensors:        CUDA0 model buffer size =  4168.09 MiB\nError: "
           'DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")\n'
           "pid, process_name, used_gpu_memory [MiB]\n4242, /usr/bin/python3, 300 MiB\n5151, /opt/srv/bin/other-server, "
           "12000 MiB\n0, NVIDIA A100-SXM4-40GB, 40000 MiB\n6161, /opt/x, 500 MiB\n")
    s = Scan()
    s.feed_text(log)
    rows = s.facts["smi_apps"]
    head = next(n for n, v in rows.items() if v == "head")
    # the header, then 300 and 12000 MiB on the two lines after it; the GPU query line ends the table, the row after it is not read
    assert rows == {head: "head", head + 1: 300 * (1 << 20), head + 2: 12000 * (1 << 20)}


# 7. (rev8 D9) one traceback, not the chain
SG = "/opt/sglang/python/sglang/srt/"
SG_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.50 GiB "
          "of which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.30 GiB memory in use. Of the "
          "allocated memory 22.00 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.\n")


def test_sglang_attention_init_not_read_across_chained_tracebacks():
    # the failure: init_attention_backend -> a backend's warm() (no __init__); then, while handling it, a fallback backend's
    # __init__ raised something else: the innermost __init__ and init_attention_backend are in two tracebacks
    log = ("[2026-01-01 00:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           f'  File "{SG}model_executor/model_runner.py", line 10, in init_attention_backend\n    self.attn_backend.warm()\n'
           f'  File "{SG}layers/attention/flashinfer_backend.py", line 30, in warm\n    self.ws = torch.empty(n)\n' + SG_OOM
           + "\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n"
           f'  File "{SG}managers/scheduler.py", line 40, in fallback\n    b = TritonAttnBackend(self)\n'
           f'  File "{SG}layers/attention/triton_backend.py", line 20, in __init__\n    raise RuntimeError("no fallback")\n'
           "RuntimeError: no fallback\n")
    _, conf, ev = top(log)
    assert ev["runtime"] == "sglang"
    assert not any("attention backend" in e for c in ev["causes"] for e in c["evidence"]), conf     # was "other"


def test_fix10t_patterns_linear():
    n = 1 << 20
    assert_each_fast([
        (dict(FACTS)["batch_ran"].search, ["batch size " * (n // 11), "batch size 1 " + " " * n, "batch_size=" + "1" * n,
                                           "batch size 1 is " * (n // 16)]),
        (dict(FACTS)["igpu_named"].search, ["unified memory " * (n // 15), "unified memory" + " " * n,
                                            "unified memory =" * (n // 16), "unified memory = fals" * (n // 21)]),
    ])
