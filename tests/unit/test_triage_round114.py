"""Triage round 114 (batches 597-601): message forms written by hand from the runtimes' and tools' own wording, with the
expected values worked out by hand.

1. nvidia-smi's compute-apps query in CSV (--query-compute-apps=pid,process_name,used_memory --format=csv), printed after
   a cudarc driver failure by the script that ran the program: rows still on the card holding 1.5 GiB or more read
   other-process; a table under that, none, or one printed before the failure, does not.
2. A Rust server's own error context around cudarc's DriverError: "spec session alloc failed (DriverError(...))" names
   the session's KV/state cache (kv-cache); "embed table upload: DriverError(...)" names a weight table being placed
   (weights-exceed-vram).
3. The same driver failure again on a later line of its incident, its context named only there ("[batch] failed
   (DriverError(...))", then "cache alloc failed: DriverError(...)"): that stage is read.
4. ggml-cuda's CUDA error with a backtrace naming the flash-attention launch (launch_fattn, ggml_cuda_flash_attn_ext),
   printed as templates or mangled: activations; the pool's allocation alone (no such frame) keeps its reading."""
import pytest

from support.regex_time import assert_each_fast
from support.triage_event import top
from gpu_garden.memory.triage.fact_patterns import FACTS

MB = 1 << 20
SMI_APPS = dict(FACTS)["smi_apps"]
STAGE_SAID = dict(FACTS)["stage_said"]
GGML_FATTN = dict(FACTS)["ggml_fattn"]
OOM = 'DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")'

# --- 1. nvidia-smi's compute-apps CSV after the failure -------------------------------------------------------------
APPS_AFTER = """loaded model (48 layers)
check 1 OK
Error: {oom}
pid, process_name, used_gpu_memory [MiB]
4242, /usr/bin/python3, {a} MiB
5151, /opt/srv/bin/other-server, {b} MiB
"""


def test_apps_table_after_failure_with_others_holding_gigabytes_is_other_process():
    cause, conf, ev = top(APPS_AFTER.format(oom=OOM, a=300, b=12000))
    assert cause == "other-process"
    assert ev["runtime"] == "candle" and ev["device_kind"] == "cuda"
    assert conf["other-process"] > 0.5


def test_apps_table_rows_sum_past_the_threshold():
    # 800 + 800 MiB = 1600 MiB >= 1.5 GiB (1536 MiB): together they held it
    cause, _, _ = top(APPS_AFTER.format(oom=OOM, a=800, b=800))
    assert cause == "other-process"


def test_apps_table_with_small_rows_is_no_evidence():
    # 300 + 900 MiB = 1200 MiB < 1536 MiB: a desktop's share; the driver error's own reading stays
    cause, conf, _ = top(APPS_AFTER.format(oom=OOM, a=300, b=900))
    assert cause == "other"
    assert conf["other-process"] < 0.5


def test_apps_table_before_the_failure_is_not_read():
    before = ("pid, process_name, used_gpu_memory [MiB]\n4242, /opt/srv/bin/other-server, 12000 MiB\n"
              "loaded model (48 layers)\ncheck 1 OK\nError: " + OOM + "\n")
    cause, _, _ = top(before)
    assert cause == "other"


def test_apps_rows_without_their_header_are_not_read():
    cause, _, _ = top("Error: " + OOM + "\n4242, /opt/srv/bin/other-server, 12000 MiB\n")
    assert cause == "other"


@pytest.mark.parametrize("line, head, mib", [
    ("pid, process_name, used_gpu_memory [MiB]", True, None),
    ("1909368, /home/u/bin/server, 14786 MiB", False, "14786"),
    ("7, python, 3 MiB   ", False, "3"),
    ("12, /srv/a b/server, 900 MiB memory.used [MiB], memory.total [MiB]", False, "900"),   # a row re-joined with the next line
])
def test_smi_apps_pattern_reads_header_and_rows(line, head, mib):
    m = SMI_APPS.search(line)
    assert m and bool(m.group("head")) == head and m.group("mib") == mib


@pytest.mark.parametrize("line", [
    "pid, process_name, used_memory [MiB]",               # another query's header
    "15160 MiB, 24463 MiB",                               # memory.used, memory.total
    "1234, python, [N/A]",                                # no figure
    "1234 /home/u/bin/server 14786 MiB",                  # not CSV
])
def test_smi_apps_pattern_controls(line):
    assert SMI_APPS.search(line) is None


# --- 2. a session's allocation and the embedding table's upload ---------------------------------------------------------
def test_session_alloc_failed_is_kv_cache():
    log = ("[worker] loading model \"m\" <- /models/m.gguf\n[server] listening on http://127.0.0.1:8000\n"
           "[worker] spec session alloc failed (" + OOM + "); tokenwise path\n")
    cause, conf, ev = top(log)
    assert cause == "kv-cache" and ev["runtime"] == "candle"
    assert conf["kv-cache"] > 0.5


def test_embed_table_upload_is_weights():
    log = ("loaded repack (40 layers)\nthread 'main' (4242) panicked at crates/engine/src/spec.rs:10:5:\n"
           "embed table upload: " + OOM + "\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
    cause, conf, _ = top(log)
    assert cause == "weights-exceed-vram"
    assert conf["weights-exceed-vram"] > 0.5


@pytest.mark.parametrize("line, group", [
    ("[worker] spec session alloc failed (" + OOM + ")", "kv"),
    ("session allocation failed: " + OOM, "kv"),
    ("embed table upload: " + OOM, "load"),
    ("embedding table upload: " + OOM, "load"),
    ("cache alloc failed: " + OOM, "kv"),                       # the existing form, unchanged
])
def test_stage_said_groups(line, group):
    m = STAGE_SAID.search(line)
    assert m and m.lastgroup == group


@pytest.mark.parametrize("line", ["session allocated", "embed table uploaded in 3 ms", "table upload: ok"])
def test_stage_said_controls(line):
    assert STAGE_SAID.search(line) is None


# --- 3. the stage named where the same failure came again --------------------------------------------------------------
REPEAT = """[server] listening on http://127.0.0.1:8000
[batch] B=4 tokens=900 in 120.0ms
[batch] failed ({oom}); single requests serve
HTTP Error 400: Bad Request {{"error":"cache alloc failed: {oom}"}}
"""


def test_stage_on_the_repeat_line_is_read():
    cause, conf, _ = top(REPEAT.format(oom=OOM))
    assert cause == "kv-cache"
    assert conf["kv-cache"] > 0.5


def test_no_stage_anywhere_stays_the_driver_errors_reading():
    cause, _, _ = top(REPEAT.format(oom=OOM).replace("cache alloc failed: ", "request failed: "))
    assert cause == "other"


# --- 4. ggml-cuda's flash-attention launch in the backtrace ---------------------------------------------------------------
FATTN = """slot update_slots: id 0 | task 12 | prompt processing progress, n_tokens=40960, progress=0.500
/src/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:97: CUDA error
CUDA error: out of memory
ggml_cuda_pool_vmm::alloc at ggml-cuda.cu
{frames}
"""


@pytest.mark.parametrize("frames", [
    "launch_fattn<128,8,4>\nggml_cuda_flash_attn_ext_vec_case<128,128>",
    "/usr/lib/libggml-cuda.so(_Z12launch_fattnILi64ELi8ELi4EEvR25ggml_backend_cuda_context+0x1f)[0x7f00]",
    "ggml_cuda_flash_attn_ext_tile_case<64,64>",
])
def test_cuda_error_in_flash_attention_launch_is_activations(frames):
    cause, conf, ev = top(FATTN.format(frames=frames))
    assert cause == "activations" and ev["runtime"] == "llama.cpp"
    assert conf["activations"] > 0.5


def test_pool_allocation_without_flash_attention_frame_is_not_read_so():
    cause, _, _ = top(FATTN.format(frames="ggml_backend_sched_graph_compute_async\nllama_decode"))
    assert cause == "other"


@pytest.mark.parametrize("line, hit", [
    ("launch_fattn<256,4,8>", True), ("  #3 ggml_cuda_flash_attn_ext_mma_f16_case<64,64,8>", True),
    ("flash_attn = enabled", False), ("llama_context: flash_attn    = auto -> enabled", False),
])
def test_ggml_fattn_pattern(line, hit):
    assert bool(GGML_FATTN.search(line)) == hit


def test_new_patterns_are_linear_on_adversarial_lines():
    assert_each_fast([
        (SMI_APPS.search, ["1, " + "a" * MB, "1, " * (MB // 3), " 1, a, " + "9" * MB, ("1, " + "a" * 299 + ", ") * (MB // 305),
                           "pid, process_name, used_gpu_memory [MiB" * (MB // 39), " " * MB + "1, a, 1 MiBx"]),
        (STAGE_SAID.search, ["session alloc" * (MB // 13), "embed table uploa" * (MB // 17), "embedding " * (MB // 10),
                             "kv_" * (MB // 3) + "session", "s" * MB]),
        (GGML_FATTN.search, ["launch_fatt" * (MB // 11), "ggml_cuda_flash_attn_ex" * (MB // 23), "_" * MB]),
    ])
