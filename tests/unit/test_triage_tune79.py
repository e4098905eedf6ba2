"""Round 79 (batches 212-217), written from the runtimes' own message formats:
- the kernel's OOM-killer line for a memory cgroup's limit ("Memory cgroup out of memory: Killed process ...", mm/oom_kill.c,
  other_patterns.KILLED), modelled on the training notes committed to tungd/tinystory-vn (a Colab VM's data preparation);
- Ollama's scheduler's own warning after a runner ran out of memory ("runtime OOM detected; expiring loaded models to clear
  memory before next request", server/sched.go; fact_patterns.OLLAMA_SERVER_SAYS), modelled on koydas/gitops-homelab's ADR-0019
  and peancharoen/lcbp3's OCR session log;
- XLA's refusal without its status code ("Out of memory while trying to allocate N bytes.", xla_runtimes.XLA) and an Elixir
  frame of the exla application (runtime_markers), modelled on blasphemetheus/exphil's docs/GOTCHAS.md.
Sizes, pids and paths are made up; the expected values are worked out by hand from the lines."""

from gpu_garden.memory.triage import engine as triage
from support.triage_event import last_event as _head  # (result, the headline event)
from support.regex_time import cpu_limit, cpu_now




# --- the kernel's OOM killer under a memory cgroup's limit --------------------------------------------------------------

def test_memory_cgroup_kill_line_is_the_oom_killer():
    res, ev = _head("Memory cgroup out of memory: Killed process 31337 (python3) total-vm:23068672kB, anon-rss:11796480kB, "
                    "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:23456kB oom_score_adj:0\n")
    assert (ev["kind"], ev["device_kind"], ev["runtime"]) == ("os.oom_killer", "cpu", "pytorch")
    assert res["cause"] == "host-ram"


def test_memory_cgroup_kill_line_quoted_without_its_pid():
    # a write-up's shortened quotation: no pid, the size written by hand; no figure is read from it
    res, ev = _head("Memory cgroup out of memory: Killed process (python3) total-vm:22GB\n")
    assert (ev["kind"], ev["numbers"]) == ("os.oom_killer", {})
    assert res["cause"] == "host-ram"


def test_older_kernels_kill_process_wording_under_a_cgroup():
    # before 4.x: "Memory cgroup out of memory: Kill process <pid> (<comm>) score <n> or sacrifice child"
    res, ev = _head("[86400.123456] Memory cgroup out of memory: Kill process 4242 (python) score 998 or sacrifice child\n")
    assert ev["kind"] == "os.oom_killer" and res["cause"] == "host-ram"


def test_the_phrase_without_the_kill_is_not_a_kill():
    # prose naming the kernel's words without its ": Kill(ed) process" is no kill line
    res = triage.triage_text("check dmesg for Memory cgroup out of memory to see whether the limit was hit\n")
    assert not res["found"] or res["events"][res["headline"]]["kind"] != "os.oom_killer"


def test_cgroup_kill_form_stays_linear():
    t = cpu_now()
    triage.triage_text("Memory cgroup out of memory: " + "Kill " * 40000 + "\n")
    assert cpu_now() - t < cpu_limit(5.0)


# --- Ollama's scheduler after a runtime out-of-memory error -------------------------------------------------------------

_GGML = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1536.00 MiB on device 0: cudaMalloc failed: out of memory\n"
         "ggml_gallocr_reserve_n_impl: failed to allocate CUDA0 buffer of size 1610612736\n")


def test_scheduler_warning_names_ollama():
    _, ev = _head(_GGML + 'level=WARN msg="runtime OOM detected; expiring loaded models to clear memory before next request" '
                  'model=/models/blobs error="llama-server terminated"\n')
    assert ev["runtime"] == "ollama"
    assert ev["numbers"]["requested"] == 1610612736


def test_scheduler_warning_as_a_journal_line_names_ollama():
    _, ev = _head(_GGML + "runtime OOM detected; expiring loaded models to clear memory before next request\n")
    assert ev["runtime"] == "ollama"


def test_ggml_failure_alone_stays_llama_cpp():
    _, ev = _head(_GGML)
    assert ev["runtime"] == "llama.cpp"


# --- XLA's refusal without its status code; EXLA's frames ---------------------------------------------------------------

def test_exla_runtime_error_reads_the_exact_request():
    _, ev = _head("** (RuntimeError) Out of memory while trying to allocate 144480 bytes.\n"
                  "    (exla 0.10.0) EXLA.NIF.binary_to_device_mem(...)\n")
    assert ev["kind"] == "xla.oom" and ev["runtime"] == "exla"
    assert ev["numbers"]["requested"] == 144480


def test_status_message_alone_is_xla():
    # relayed by a script with no frame: XLA's message, the runtime left at XLA's usual host (JAX)
    res, ev = _head("[10:04:11] Run 2 failed: Out of memory while trying to allocate 3932160 bytes.\n")
    assert (ev["kind"], ev["runtime"]) == ("xla.oom", "jax")
    assert ev["numbers"] == {"requested": 3932160}


def test_status_code_form_unchanged():
    _, ev = _head("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1600040704 bytes.\n")
    assert (ev["kind"], ev["runtime"], ev["numbers"]["requested"]) == ("xla.oom", "jax", 1600040704)


def test_other_runtimes_while_trying_to_allocate_are_not_xla():
    # PyTorch's allocator warning and a size that is not XLA's "<n> bytes." stay out of the XLA reader
    res = triage.triage_text("UserWarning: memory allocation failed with OOM on device 0 while trying to allocate 2097152 bytes\n")
    assert not res["found"] or res["events"][res["headline"]]["kind"] != "xla.oom"
    res = triage.triage_text("Error: Out of memory while trying to allocate 1.50 GB for the texture atlas\n")
    assert not res["found"] or res["events"][res["headline"]]["kind"] != "xla.oom"


def test_exla_frame_needs_its_version():
    # "(exla" in prose is no Elixir frame
    _, ev = _head("** (RuntimeError) Out of memory while trying to allocate 144480 bytes.\n"
                  "the backend here is EXLA (exla is Nx's XLA compiler)\n")
    assert ev["runtime"] == "jax"


def test_new_forms_stay_linear():
    lines = ["Out of memory while trying to allocate " + "1" * 80000,
             "(exla " + "1." * 40000,
             "runtime OOM detected; " * 5000]
    for line in lines:
        t = cpu_now()
        triage.triage_text(line + "\n")
        assert cpu_now() - t < cpu_limit(5.0)
