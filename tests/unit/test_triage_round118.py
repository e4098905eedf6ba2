"""Triage round 118 (batches 617-622, 625-627): message forms written by hand from the runtimes' own wording, with the
expected values worked out by hand.

1. The TPU's compile failure without "in memory space": tpu-inference's "CompileTimeHbmOom: Used N of M hbm" and the figures'
   sentence followed by "Exceeded hbm capacity by K": xla.oom on the TPU, compile form (required, total), activations.
2. The TPU runtime's own refusals, "RESOURCE_EXHAUSTED: Ran out of memory on HBM, ..." and "RESOURCE_EXHAUSTED: E0100:
   RuntimeBufferAllocationFailure": xla.oom on the TPU, no figures.
3. KenLM's MallocException ("Cannot allocate memory for N bytes in malloc"): host-ram, runtime kenlm, device cpu, requested.
4. PyTorch's "unable to mmap N bytes from FILE:" wrapped before "Cannot allocate memory (12)": joined, host-ram, requested.
5. vLLM's start-up check gives the context flag (--max-model-len) as max_model_len_tokens.
6. gpu_memory_utilization read by line: the last setting at or before the failure, not one a later try printed.
7. The kernel's kill line quoted with the victim in parentheses and no pid, anon-rss in a unit: this_process, llama.cpp.
8. vLLM on the TPU out of memory while capture_model loads its programs: graph-capture; tpu-inference's memory statistics
   line gives the chip's total.
9. XLA's FFT thunk, "Failed to create cuFFT batched plan with scratch allocator": xla.oom on cuda, jax, activations.
10. A program's sweep line saying a batch size ran ("batch size 2 successful."): activations over "the model fills the card"."""
from support.regex_time import assert_each_fast
from support.triage_event import read, top
from gpu_garden.memory.triage.fact_patterns import FACTS
from gpu_garden.memory.triage.host_readers import KILLED_UNIT
from gpu_garden.memory.triage.other_patterns import ENOMEM, KENLM_MALLOC
from gpu_garden.memory.triage.xla_runtimes import XLA_FFT_PLAN, XLA_TPU_HBM, xla_tpu_hbm

G = 1 << 30
M = 1 << 20


# 1. the compile failure quoted from its figures
def test_compile_time_hbm_oom_named_by_its_exception():
    cause, kind, runtime, device, nums = read("jax.errors.JaxRuntimeError: CompileTimeHbmOom: Used 40.00G of 16.00G hbm\n")
    assert (kind, runtime, device) == ("xla.oom", "jax", "tpu")
    assert nums == {"required": 40 * G, "total": 16 * G}
    assert cause == "activations"


def test_used_of_hbm_with_exceeded_sentence():
    cause, kind, _, device, nums = read("Used 33.50G of 31.25G hbm. Exceeded hbm capacity by 2.25G.\n"
                                        "    program     20.00G\n    arguments   13.50G\n")
    assert (kind, device) == ("xla.oom", "tpu")
    assert nums == {"required": int(33.5 * G), "total": int(31.25 * G)}
    assert cause == "activations"


def test_used_of_hbm_alone_is_no_failure():
    assert xla_tpu_hbm("HBM usage: Used 3.00G of 16.00G hbm") is None        # a usage line: no exception, no "Exceeded"
    assert xla_tpu_hbm("CompileTimeHbmOom: Used 2.00G of 8.00G vmem") is None


# 2. the runtime's own refusals on the chip
def test_ran_out_of_memory_on_hbm():
    _, kind, runtime, device, nums = read("  B= 4 | ctx=  4K ... FAILED: RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total\n")
    assert (kind, runtime, device) == ("xla.oom", "jax", "tpu") and nums == {}


def test_runtime_buffer_allocation_failure():
    _, kind, runtime, device, _ = read("step 7 FAILED: RESOURCE_EXHAUSTED: E0100: RuntimeBufferAllocationFailure:\n")
    assert (kind, runtime, device) == ("xla.oom", "jax", "tpu")
    assert xla_tpu_hbm("RuntimeBufferAllocationFailure noted in the docs") is None   # not a status


# 3. KenLM's MallocException
def test_kenlm_malloc_exception():
    cause, kind, runtime, device, nums = read(
        "util/scoped.cc:20 in void* util::{anonymous}::InspectAddr(void*, std::size_t, const char*) threw MallocException "
        "because `!addr && requested'.\nCannot allocate memory for 3000000000 bytes in malloc\nAborted (core dumped)\n")
    assert (cause, kind, runtime, device) == ("host-ram", "os.enomem", "kenlm", "cpu")
    assert nums["requested"] == 3000000000


def test_kenlm_forms():
    assert KENLM_MALLOC.search("Cannot allocate memory for 12 bytes in realloc").group(1) == "12"
    assert not KENLM_MALLOC.search("Cannot allocate memory for 12 bytes in total")


# 4. the mmap refusal wrapped before its errno
def test_mmap_wrapped_before_enomem():
    cause, kind, _, _, nums = read("RuntimeError: unable to mmap 5368709120 bytes from shard-00001.safetensors:\n"
                                   "Cannot allocate memory (12)\n")
    assert (cause, kind) == ("host-ram", "os.enomem")
    assert nums["requested"] == 5 * G


def test_mmap_forms():
    assert ENOMEM.search("unable to mmap 64 bytes from w.bin: Cannot allocate memory (12)").group(1) == "64"
    assert ENOMEM.search("unable to mmap 64 bytes from file /m/w.bin: Cannot allocate memory (12)").group(1) == "64"   # as before


# 5. the start-up check and the context flag
STARTUP = ("vllm serve org/model --gpu-memory-utilization 0.9 --max-model-len 16384\n"
           "(EngineCore pid=1) ERROR 01-01 00:00:00 [core.py:1] ValueError: Free memory on device cuda:0 (4.00/23.50 GiB) on "
           "startup is less than desired GPU memory utilization (0.9, 21.15 GiB). Decrease GPU memory utilization or reduce "
           "GPU memory used by other processes.\n")


def test_startup_check_gives_the_context_flag():
    _, kind, runtime, _, nums = read(STARTUP)
    assert kind == "vllm.startup_free" and runtime == "vllm"
    assert nums["max_model_len_tokens"] == 16384
    assert nums["free"] == 4 * G                    # the check's own figures stay


# 6. the utilization by line
TUNER = ("INFO tuning: testing config progress=1/2 config=map[gpu_memory_utilization:0.3]\n"
         "WARN tuning: deploy failed error=\"(EngineCore pid=9) ValueError: To serve at least one request with the models's "
         "max seq len (4096), (2.00 GiB KV cache is needed, which is larger than the available KV cache memory (1.50 GiB). "
         "Based on the available memory, the estimated maximum model length is 3072. Try increasing `gpu_memory_utilization`\"\n"
         "INFO tuning: testing config progress=2/2 config=map[gpu_memory_utilization:0.4]\n"
         "INFO tuning: best config already deployed config=\"map[gpu_memory_utilization:0.4 max_model_len:4096]\"\n")


def test_utilization_of_the_failed_try():
    cause, _, runtime, _, nums = read(TUNER)
    assert (cause, runtime) == ("kv-cache", "vllm")
    assert nums["gpu_memory_utilization_ratio"] == 0.3          # not the later try's 0.4
    assert nums["max_model_len_tokens"] == 4096 and nums["estimated_max_len_tokens"] == 3072


# 7. the kill line, victim in parentheses, anon-rss in a unit
def test_kill_line_victim_in_parentheses_with_unit():
    cause, kind, runtime, device, nums = read("Out of memory: Killed process (llama-server) anon-rss 2.5GB\n")
    assert (cause, kind, runtime, device) == ("host-ram", "os.oom_killer", "llama.cpp", "cpu")
    assert nums["this_process"] == int(2.5 * G)          # the parser reads GB as GiB, as the corpus does


def test_kill_line_unit_other_binary():
    _, _, runtime, _, nums = read("Out of memory: Killed process 12 (python3) anon-rss: 512 MiB\n")
    assert runtime != "llama.cpp" and nums["this_process"] == 512 * M
    assert not KILLED_UNIT.search("Killed process (x) total-vm 9GB")


# 8. vLLM on the TPU: capture_model's program load
def _tpu_vllm(frame):
    p = "(EngineCore pid=7) ERROR 01-01 00:00:00 [core.py:1] "
    return ("(EngineCore pid=7) INFO 01-01 00:00:00 [tpu_worker.py:1] Memory statistics | total_hbm_limit_gb=31.25GiB | "
            "total_hbm_used_gb=20.00GiB\n"
            f"{p}Traceback (most recent call last):\n"
            f'{p}  File "/w/tpu_inference/worker/tpu_worker.py", line 10, in compile_or_warm_up_model\n'
            f"{p}    self.model_runner.{frame}()\n"
            f"{p}jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: E0101: RuntimeProgramAllocationFailure:\n"
            f"{p}Error loading program 'jit_step_fn': Attempting to reserve 100.00M at the bottom of memory. That was not "
            "possible. There are 50.00M free, 0B reserved, and 50.00M reservable.\n")


def test_tpu_vllm_capture_model_reads_graph_capture():
    cause, conf, ev = top(_tpu_vllm("capture_model"))
    assert (cause, ev["runtime"], ev["device_kind"]) == ("graph-capture", "vllm", "tpu"), conf
    assert ev["numbers"]["total"] == int(31.25 * G)
    assert ev["numbers"]["requested"] == 100 * M and ev["numbers"]["free"] == 50 * M


def test_tpu_vllm_without_capture_is_not_graph_capture():
    cause, conf, ev = top(_tpu_vllm("load_model"))
    assert cause != "graph-capture" and ev["numbers"]["total"] == int(31.25 * G), conf


# 9. cuFFT's plan
def test_cufft_plan_scratch():
    cause, kind, runtime, device, nums = read("INTERNAL: RET_CHECK failure (xla/service/gpu/runtime/fft_thunk.cc:176) "
                                              "fft_plan != nullptr\nFailed to create cuFFT batched plan with scratch allocator\n")
    assert (cause, kind, runtime, device, nums) == ("activations", "xla.oom", "jax", "cuda", {})
    assert XLA_FFT_PLAN.search("Failed to create hipFFT batched plan with scratch allocator").group(1) == "hip"


# 10. a sweep's own line saying a batch ran
SWEEP = ("INFO: GPU memory: 300.0\nINFO: x shape = torch.Size([2, 256])\nINFO: GPU memory: 2900.0\n"
         "INFO: batch size 2 successful.\nINFO: GPU memory: 300.0\n"
         "exception <class 'RuntimeError'> : CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 7.80 GiB total capacity; "
         "7.50 GiB already allocated; 40.00 MiB free; 70.00 MiB cached)\n")


def test_batch_ran_reads_activations():
    cause, conf, _ = top(SWEEP)
    assert cause == "activations", conf


def test_without_the_sweep_line_the_card_reads_full():
    cause, conf, _ = top(SWEEP.replace("INFO: batch size 2 successful.\n", ""))
    assert cause != "activations", conf        # as before: the model fills the card, the request is small


def test_round118_patterns_linear():
    n = 1 << 20
    fact = dict(FACTS)
    assert_each_fast([
        (fact["batch_ran"].search, ["batch size " * (n // 11), "batch size 1 " + " " * n, "batch_size=" + "1" * n]),
        (fact["tpu_hbm_limit"].search, ["total_hbm_limit_gb=" * (n // 19), "total_hbm_limit_gb=" + "1" * n]),
        (KILLED_UNIT.search, ["Killed process (" + "a" * n, "Killed process (a) anon-rss " * (n // 28),
                              "Killed process (a) anon-rss " + "1" * n]),
        (XLA_FFT_PLAN.search, ["Failed to create cuFFT " * (n // 23)]),
        (XLA_TPU_HBM.search, ["CompileTimeHbmOom: Used " + "1" * n, "Used 1G of " * (n // 11), "Used " + "9." * (n // 2),
                              "RESOURCE_EXHAUSTED " * (n // 19), "RESOURCE_EXHAUSTED: " + "x" * n,
                              "Used 1G of 2G hbm." + " " * n]),
        (xla_tpu_hbm, ["hbm " * (n // 4), "Used 1.0G of 2.0G hbm " * (n // 22)]),
        (KENLM_MALLOC.search, ["Cannot allocate memory for " + "1" * n, "Cannot allocate memory for 1 bytes in " * (n // 38)]),
        (ENOMEM.search, ["unable to mmap 1 bytes from " + "a" * n, "unable to mmap 1 bytes from a: " * (n // 32),
                         "unable to mmap " + "1" * n]),
    ])
