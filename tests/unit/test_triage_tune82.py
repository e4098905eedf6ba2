"""Round 82 (batches 247-265 after first sight), written from the runtimes' own message formats:
- TH's allocator (Lua Torch's lib/TH/THGeneral.c, and PyTorch's TH before ATen replaced it): THAlloc's and THRealloc's
  "$ Torch: not enough memory: you tried to allocate %dGB. Buy new RAM!" ("reallocate" from THRealloc), the size in whole
  GiB (size/1073741824): error_patterns.CPU. Lua Torch's rocks sit under <prefix>/share/lua/5.1/<rock>/ and Lua prints an
  error with its source's place: runtime_markers' 'torch7'.
- Windows' Resource-Exhaustion-Detector event (2004): "Windows successfully diagnosed a low virtual memory condition. The
  following programs consumed the most virtual memory: <image> (<pid>) consumed <n> bytes, ...": other_patterns.LOW_VIRTUAL_MEMORY.
- XLA's allocator status without its code, the size as tsl's HumanReadableNumBytes prints it ("Out of memory while trying to
  allocate 16.00GiB."): xla_runtimes.XLA.
- ggml-alloc's "%s: failed to allocate %s buffer of size %zu" quoted cut before its size: servers.GGML_BUFFER_CUT.
- ggml's GGML_ASSERT before 2024 (ggml.h: "GGML_ASSERT: %s:%d: %s", file, line, condition) on ggml_init's context buffer
  ("ctx->mem_buffer != NULL"): malloc refused the context's host memory, as the newer "GGML_ASSERT(ctx->mem_buffer != NULL)".
- the kernel's OOM-kill line (mm/oom_kill.c: "<message>: Killed process <pid> (<comm>) total-vm:<n>kB, anon-rss:<n>kB,
  file-rss:<n>kB, shmem-rss:<n>kB, ..."): the victim's anonymous resident memory, KiB, is the process's (other_patterns.KILLED).
Paths, sizes, process names and ids are made up in the formats' layout; the expected values are worked out by hand."""

from gpu_garden.memory.triage import engine as triage
from support.triage_event import last_event as _head  # (result, the headline event)
from support.regex_time import cpu_limit, cpu_now

GiB = 1024 ** 3


def _read(text):
    res, ev = _head(text)
    return res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev["numbers"]


# --- TH's allocator --------------------------------------------------------------------------------------------------

def test_lua_torch_realloc_is_host_ram_of_torch7():
    text = ("/opt/user/torch/install/share/lua/5.1/nn/SpatialConvolution.lua:79: $ Torch: not enough memory: you tried to "
            "reallocate 12GB. Buy new RAM! at /opt/user/torch/pkg/torch/lib/TH/THGeneral.c:251\n")
    assert _read(text) == ("host-ram", "torch.cpu", "torch7", "cpu", {"requested": 12 * GiB})


def test_lua_torch_alloc_on_windows_paths_names_torch7():
    text = ("C:\\torch\\install\\share\\lua\\5.1\\torch\\Tensor.lua:462: $ Torch: not enough memory: you tried to allocate "
            "3GB. Buy new RAM! at C:\\torch\\pkg\\torch\\lib\\TH\\THGeneral.c:270\n")
    assert _read(text) == ("host-ram", "torch.cpu", "torch7", "cpu", {"requested": 3 * GiB})


def test_pytorch_th_alloc_stays_pytorch():
    # PyTorch 0.4's ATen-hosted TH prints the same words; no Lua rock path, so PyTorch's
    text = "RuntimeError: $ Torch: not enough memory: you tried to allocate 8GB. Buy new RAM! at /pytorch/aten/src/TH/THGeneral.cpp:201\n"
    assert _read(text) == ("host-ram", "torch.cpu", "pytorch", "cpu", {"requested": 8 * GiB})


def test_th_zero_gb_reads_no_figure():
    # size/1073741824 of a request under 1 GiB prints 0GB: the words count, the figure is not a size
    text = "RuntimeError: $ Torch: not enough memory: you tried to allocate 0GB. Buy new RAM! at /pytorch/aten/src/TH/THGeneral.cpp:201\n"
    assert _read(text) == ("host-ram", "torch.cpu", "pytorch", "cpu", {})


def test_lua_named_in_prose_is_not_torch7():
    res, ev = _head("installed lua 5.1 and share/lua/5.1/nn/ by hand\nRuntimeError: CUDA out of memory.\n")
    assert ev["runtime"] != "torch7"


# --- Windows' Resource-Exhaustion-Detector ---------------------------------------------------------------------------

def test_windows_low_virtual_memory_event_is_host_ram_with_the_top_program():
    text = ("Windows successfully diagnosed a low virtual memory condition. The following programs consumed the most virtual "
            "memory: trainer.exe (4242) consumed 34359738368 bytes, chrome.exe (1200) consumed 2147483648 bytes, and "
            "explorer.exe (880) consumed 104857600 bytes.\n")
    cause, kind, _, dev, nums = _read(text)
    assert (cause, kind, dev, nums) == ("host-ram", "os.paging_file", "cpu", {"this_process": 34359738368})


def test_windows_low_virtual_memory_sentence_alone():
    cause, kind, _, dev, nums = _read("Windows successfully diagnosed a low virtual memory condition.\n")
    assert (cause, kind, dev, nums) == ("host-ram", "os.paging_file", "cpu", {})


def test_low_virtual_memory_in_prose_is_not_the_event():
    assert not triage.triage_text("checking whether this was a low virtual memory condition\n")["found"]


# --- XLA's status message, human-readable size -----------------------------------------------------------------------

def test_xla_bare_message_with_human_readable_size():
    cause, kind, _, _, nums = _read("Out of memory while trying to allocate 2.50GiB.\n")
    assert (kind, nums) == ("xla.oom", {"requested": int(2.5 * GiB)})


def test_xla_bare_message_in_mebibytes():
    cause, kind, _, _, nums = _read("error: Out of memory while trying to allocate 768.00MiB.\n")
    assert (kind, nums) == ("xla.oom", {"requested": 768 * 1024 ** 2})


# --- ggml-alloc's buffer line cut before its size --------------------------------------------------------------------

def test_ggml_cpu_buffer_line_cut_before_size_is_host_ram():
    text = ("ggml_init_cublas: found 1 CUDA devices:\n"
            "  Device 0: NVIDIA RTX A6000, compute capability 8.6, VMM: yes\n"
            "alloc_tensor_range: failed to allocate CPU buffer\n")
    cause, kind, rt, dev, nums = _read(text)
    assert (cause, kind, rt, dev, nums) == ("host-ram", "ggml.buffer", "llama.cpp", "cpu", {})


def test_ggml_device_buffer_line_cut_before_size_keeps_its_device():
    cause, kind, rt, dev, nums = _read("alloc_tensor_range: failed to allocate CUDA0 buffer\n")
    assert (kind, rt, dev, nums) == ("ggml.buffer", "llama.cpp", "cuda", {})


def test_a_buffer_name_outside_ggml_table_is_not_the_cut_line():
    assert not triage.triage_text("llama_new_context: failed to allocate compute buffer\n")["found"]


# --- ggml's older assert form -----------------------------------------------------------------------------------------

def test_old_ggml_assert_on_context_buffer_is_host_ram():
    text = "GGML_ASSERT: /src/app/llama.cpp/ggml.c:4412: ctx->mem_buffer != NULL\nAborted (core dumped)\n"
    cause, kind, rt, dev, nums = _read(text)
    assert (cause, kind, rt, dev) == ("host-ram", "ggml.host", "llama.cpp", "cpu")


def test_old_ggml_assert_on_another_condition_is_not_the_context_buffer():
    res = triage.triage_text("GGML_ASSERT: /src/app/llama.cpp/ggml.c:4412: ne % ggml_blck_size(type) == 0\n")
    assert not res["found"] or res["events"][res["headline"]]["kind"] != "ggml.host"


# --- the kernel's OOM-kill line with the victim's sizes ---------------------------------------------------------------

def test_kernel_kill_line_reads_anon_rss_as_the_process():
    text = ("[81234.567890] Out of memory: Killed process 4321 (python3) total-vm:20971520kB, anon-rss:8388608kB, "
            "file-rss:2048kB, shmem-rss:0kB, UID:1000 pgtables:17000kB oom_score_adj:0\n")
    cause, kind, _, dev, nums = _read(text)
    assert (cause, kind, dev, nums) == ("host-ram", "os.oom_killer", "cpu", {"this_process": 8388608 * 1024})


def test_memory_cgroup_kill_line_reads_anon_rss():
    text = ("Jan 02 03:04:05 host kernel: Memory cgroup out of memory: Killed process 999 (worker) total-vm:4194304kB, "
            "anon-rss:1048576kB, file-rss:512kB, shmem-rss:0kB, UID:0 pgtables:2100kB oom_score_adj:0\n")
    assert _read(text)[4] == {"this_process": 1048576 * 1024}


def test_kernel_kill_line_without_sizes_reads_no_figure():
    assert _read("Out of memory: Killed process 4321 (python3)\n")[4] == {}


def test_new_forms_stay_linear():
    lines = ("Torch: not enough memory: you tried to reallocate " + "9" * 50000,
             "/share/lua/5.1/" * 20000 + " out of memory",
             "Windows successfully diagnosed a low virtual memory condition. The following programs consumed the most "
             "virtual memory: " + "a (" * 30000,
             "Out of memory while trying to allocate " + "1" * 50000 + ".00GiB",
             "failed to allocate CPU" + "x" * 50000 + " buffer",
             "failed to allocate " * 10000 + "CPU buffer",
             "Out of memory: Killed process 1 (" + "x" * 50000 + ") total-vm:1kB, anon-rss:",
             "Out of memory: Killed process " * 5000,
             "GGML_ASSERT: " + "a:1: " * 20000 + "ctx->mem_buffer")
    for line in lines:
        t = cpu_now()
        triage.triage_text(line + "\n")
        assert cpu_now() - t < cpu_limit(5.0)
