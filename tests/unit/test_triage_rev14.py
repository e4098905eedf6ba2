"""rev14 B1 and S3: round 121's Ollama-discovery row (server_predicates.ollama_discovery_cpu, rules_process other-process 3.0)
holds only where the GPU out-of-memory error is Ollama's GPU discovery's own. Written by hand from review rev14's hand checks
(/tmp/rev14/c3.py) and Ollama's own lines (server/routes.go "Listening on %s (version %s)" before discovery; discover/gpu.go
of 2025 "no compatible GPUs were discovered" before its CPU record, app/server/server_test.go:288-289; server/sched.go's
"error loading llama server" quoting "llama runner process has terminated: ..."), with the expected values worked out by hand.

B1: refused where Ollama started again between the error and the CPU record (and, till rev15 S2, where its discovery kept no
GPU: rev15 F1 removed that fact), and where the failure shows a model load (the runner's wrapper, ggml naming a model's
function beside the error, a load started since).
S3: the row's text names the GPU, not CUDA, since ROCm's "HIP error: out of memory" is the same kind (cuda.driver)."""
from pathlib import Path

from support.regex_time import assert_each_fast
from support.unseen_corpus import load
from support.triage_event import top
from gpu_garden.memory.triage import engine

ROW = "while Ollama discovered its GPUs"          # the round-121 row's evidence
T = "time=2025-01-01T00:00:10Z level=INFO "
LISTEN = T + 'source=routes.go:1238 msg="Listening on 127.0.0.1:11434 (version 0.5.7)"\n'
LOOKING = T + 'source=gpu.go:226 msg="looking for compatible GPUs"\n'
NONE_FOUND = T + 'source=gpu.go:392 msg="no compatible GPUs were discovered"\n'
CPU = (T + 'source=types.go:131 msg="inference compute" id=0 library=cpu variant="" compute="" driver=0.0 name="" '
       'total="31.3 GiB" available="30.4 GiB"\n')
RESTART = LISTEN + LOOKING + NONE_FOUND + CPU
OOM = "CUDA error: out of memory\n"
# an Ollama runner's own out-of-memory error (ggml's pool, then the scheduler relaying the runner's end)
SCHED = ('time=2025-01-01T00:00:05Z level=ERROR source=sched.go:455 msg="error loading llama server" '
         'error="llama runner process has terminated: CUDA error: out of memory"\n')
RUNNER_OOM = OOM + "  current device: 0, in function alloc at ggml-cuda.cu:400\n  cudaMalloc(&ptr, size)\n" + SCHED
# llama.cpp's own out-of-memory error in its compute pool
LLAMA_OOM = ("llama_kv_cache_init:      CUDA0 KV buffer size =  8192.00 MiB\n"
             "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory\n"
             + OOM + "  current device: 0, in function ggml_cuda_pool_malloc at ggml/src/ggml-cuda/ggml-cuda.cu:400\n"
             "  cudaMalloc(&ptr, size)\n/ggml/src/ggml-cuda/ggml-cuda.cu:96: CUDA error\n")
LOAD = "load_tensors: loading model tensors, this can take a while... (mmap = true)\n"
CASE_648 = next((Path(__file__).parent / "corpus/unseen/batch-648").glob("ollama_*.log"))


def _row(ev) -> bool:
    return any(ROW in e for c in ev["causes"] for e in c["evidence"])


def _refused(text):
    cause, conf, ev = top(text)
    assert not _row(ev), text
    return cause, conf


# rev14's hand checks (c3.py): a runner's own OOM, then a CPU record; was other-process on main

def test_runner_oom_then_cpu_record_only():
    # the pool's alloc (rules.py: llama.cpp's compute pool could not grow) leads once the discovery row is refused
    cause, conf = _refused(RUNNER_OOM + CPU)
    assert cause == "activations" and conf["activations"] > conf.get("other-process", 0)


def test_runner_oom_then_cpu_only_restart():
    assert _refused(RUNNER_OOM + RESTART)[0] == "activations"


def test_runner_oom_then_no_gpus_then_cpu_record():
    # (rev15 S2) refused by the runner's wrapper and ggml's alloc, not by "no compatible GPUs" (which refuses nothing now)
    assert _refused(RUNNER_OOM + NONE_FOUND + CPU)[0] == "activations"
    _refused(OOM + "  current device: 0, in function alloc at ggml-cuda.cu:400\n" + NONE_FOUND + CPU)
    _refused(OOM + SCHED + NONE_FOUND + CPU)


def test_llamacpp_own_oom_then_cpu_only_ollama_start():
    assert _refused(LLAMA_OOM + RESTART)[0] == "activations"


# each refusal on its own, the bare error otherwise as batch 648's (which reads other-process)

def test_ollama_start_between_refuses_and_before_does_not():
    _refused(OOM + LISTEN + CPU)
    # Ollama's order (routes.go): "Listening on", then discovery's error, then its CPU record: discovery's, still read
    cause, _, ev = top(LISTEN + LOOKING + OOM + CPU)
    assert (cause, ev["runtime"]) == ("other-process", "ollama") and _row(ev)
    # batch 648's case still reads other-process under Ollama
    cause, _, ev = top(load(CASE_648)[0])
    assert (cause, ev["runtime"], ev["device_kind"]) == ("other-process", "ollama", "cuda")


def test_no_gpus_between_is_discoverys_own():
    # (rev15 S2, re-pinned: was refused) 2025 builds print "no compatible GPUs were discovered" during discovery right before
    # the CPU record (app/server/server_test.go:288): a discovery OOM's own lines; "Listening on" still refuses
    cause, _, ev = top(OOM + NONE_FOUND + CPU)
    assert cause == "other-process" and _row(ev)
    _refused(OOM + NONE_FOUND + LISTEN + CPU)


def test_runner_wrapper_refuses():
    _refused(OOM + SCHED + CPU)


def test_ggml_model_function_refuses_but_not_its_setup_or_query():
    _refused(OOM + "  current device: 0, in function ggml_cuda_op_mul_mat at ggml/src/ggml-cuda/ggml-cuda.cu:1500\n" + CPU)
    # discovery's own memory query and device set-up are no model's: still discovery's error
    for fn in ("ggml_backend_cuda_device_get_memory", "ggml_cuda_init"):
        cause, _, ev = top(OOM + f"  current device: 0, in function {fn} at ggml/src/ggml-cuda/ggml-cuda.cu:3000\n" + CPU)
        assert cause == "other-process" and _row(ev), fn


def test_load_start_refuses_unless_ollama_started_after_it():
    _refused(LOAD + OOM + CPU)
    # a model loaded in an earlier run, then Ollama started again and its discovery failed: discovery's error
    cause, _, ev = top(LOAD + LISTEN + OOM + CPU)
    assert cause == "other-process" and _row(ev)


# S3: ROCm's error is the same kind; the row names the GPU

def test_rocm_discovery_text_names_no_cuda():
    cause, _, ev = top("HIP error: out of memory\ninference compute id=cpu\n")
    assert (cause, ev["device_kind"]) == ("other-process", "rocm")
    text = next(e for c in ev["causes"] for e in c["evidence"] if ROW in e)
    assert text.startswith("the GPU ran out of memory") and "CUDA" not in text


def test_rev14_pattern_and_reads_linear():
    n = 1 << 20
    # (rev15 F1, fix18: was NO_GPU's pattern) the "ollama_no_gpu" fact is gone, its "no gpu" refused nothing since rev15 S2;
    # the discovery log with "no compatible GPUs were discovered" still reads other-process
    cause, _, ev = top(OOM + NONE_FOUND + CPU)
    assert cause == "other-process" and _row(ev)
    assert_each_fast([
        (engine.triage_text, [OOM + NONE_FOUND * (n // len(NONE_FOUND)) + CPU,
                              OOM + "  current device: 0, in function ggml_cuda_x\n" * (n // 46) + CPU]),
    ])
