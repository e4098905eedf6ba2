"""fix9: review rev8's B1 and S1 on triage, with hand-written inputs and the expected values worked out by hand.

B1. vLLM's gpu_memory_utilization / max_model_len are kept by line: a failure reads the nearest printed at or before its
    line (a retry's new settings after it belong to the next run), else the first printed after it and before the next
    failure (a paste quoting the start-up after the error).
S1. nvidia-smi's compute-apps rows are those whose shape matches the header's columns: a noheader --query-gpu line
    ("0, NVIDIA A100-SXM4-40GB, 40000 MiB") printed right after the table is no process row."""
from support.triage_event import TORCH_OOM_2250, SMI_APPS_HEADER, top
from gpu_garden.memory.triage import engine
from test_triage_round117 import ARGS, TORCH_OOM

MiB = 1 << 20
GiB = 1 << 30
# the same non-default args dict with 0.50 and 2048, and a second OOM asking for 40 MiB (the first asks for 20 MiB)
ARGS2 = ARGS.replace("0.85", "0.50").replace("4096", "2048")
TORCH_OOM_40 = TORCH_OOM.replace("Tried to allocate 20.00 MiB", "Tried to allocate 40.00 MiB")


def _settings(text):
    """(requested, utilization, max_model_len) of every event, in log order."""
    res = engine.triage_text(text)
    return [(e["numbers"].get("requested"), e["numbers"].get("gpu_memory_utilization_ratio"),
             e["numbers"].get("max_model_len_tokens")) for e in res["events"]], res


# --- B1 ----------------------------------------------------------------------------------------------------------------
def test_two_runs_each_failure_reads_its_own_settings():
    # line 1 ARGS (0.85, 4096), line 2 the 20 MiB OOM, line 3 the retry, line 4 ARGS2 (0.50, 2048), line 5 the 40 MiB OOM
    got, _ = _settings(ARGS + TORCH_OOM + "retrying with lower utilization\n" + ARGS2 + TORCH_OOM_40)
    assert got == [(20 * MiB, 0.85, 4096), (40 * MiB, 0.5, 2048)]


def test_first_failure_triaged_reads_its_run_not_the_retry():
    # the retry at 0.50 / 2048 serves (no failure): the one failure, the headline, ran at 0.85 / 4096
    got, res = _settings(ARGS + TORCH_OOM + "retrying with lower utilization\n" + ARGS2
                         + "INFO Avg prompt throughput: 1.0 tokens/s\n")
    assert got == [(20 * MiB, 0.85, 4096)]
    n = res["events"][res["headline"]]["numbers"]
    assert n["gpu_memory_utilization_ratio"] == 0.85 and n["max_model_len_tokens"] == 4096


def test_args_printed_after_the_failure():
    # a paste quoting the run's start-up after its error (line 2), then a retry printing 0.50 / 2048 (line 4) that serves:
    # no setting before the failure (line 1), so the first after it and before the next failure (none) is read
    got, _ = _settings(TORCH_OOM + ARGS + "retrying with lower utilization\n" + ARGS2
                       + "INFO Avg prompt throughput: 1.0 tokens/s\n")
    assert got == [(20 * MiB, 0.85, 4096)]


def test_vllm_setting_nearest_before_else_first_after():
    kept = {1: 0.85, 4: 0.5, 9: 0.3}
    assert engine.vllm_setting(kept, 2) == 0.85        # 1 is the nearest at or before 2
    assert engine.vllm_setting(kept, 4) == 0.5         # at the line itself
    assert engine.vllm_setting({7: 0.6, 9: 0.3}, 5) == 0.6       # none before: the first after 5
    assert engine.vllm_setting({7: 0.6}, 5, until=6) is None     # 7 is past the next failure (6)
    assert engine.vllm_setting({}, 5) is None


# --- S1 ----------------------------------------------------------------------------------------------------------------
def _held(ev):
    return [e for c in ev["causes"] for e in c["evidence"] if "lists processes still on the card" in e]


def test_noheader_gpu_query_right_after_the_table_is_no_process_row():
    # rev8's reproducer: the table's one row holds 600 MiB (< SMI_APPS_MIN); the GPU line's 40000 MiB is the card's, not a
    # process's: read as one, 600 + 40000 MiB = 39.65 GiB made it other-process
    cause, _, ev = top(TORCH_OOM_2250 + SMI_APPS_HEADER + "5151, /opt/srv/bin/other-server, 600 MiB\n"
                       "0, NVIDIA A100-SXM4-40GB, 40000 MiB\n")
    assert cause != "other-process" and not _held(ev)


def test_gpu_query_rows_end_the_table_the_process_rows_count():
    # 6144 MiB = 6.00 GiB held by the one process row (this process has 22.50 GiB: not it); the two GPU rows after it
    # (index 0 and 1, "Tesla" the older product name) would add 40000 + 16000 MiB (60.69 GiB in all)
    cause, _, ev = top(TORCH_OOM_2250 + SMI_APPS_HEADER + "5151, /opt/srv/bin/other-server, 6144 MiB\n"
                       "0, NVIDIA A100-SXM4-40GB, 40000 MiB\n1, Tesla V100-SXM2-16GB, 16000 MiB\n")
    assert cause == "other-process"
    assert any("holding 6.00 GiB" in e for e in _held(ev)), _held(ev)


def test_smi_process_row_shape():
    from gpu_garden.memory.triage.facts import smi_process_row
    assert smi_process_row("5151", "/opt/srv/bin/other-server") and smi_process_row("1", "python")
    assert smi_process_row("42", "C:\\Program Files\\app\\NVIDIA-helper.exe")     # a path that names NVIDIA later: a process
    assert not smi_process_row("0", "/usr/bin/python")                             # no process is 0
    assert not smi_process_row("1", "NVIDIA GeForce RTX 4090")
    assert not smi_process_row("3", "Quadro RTX 8000")


# --- S2 ----------------------------------------------------------------------------------------------------------------
# Unsloth Studio's discrete-GPU refusal (its _host_offload_shortfall_message, with "GB" = MiB / 1024): 9 GB of the weights
# miss free VRAM, 7 GB available less 2 GB kept free leaves 5 GB usable
GUARD = ("Failed to load model: About 9 GB of this model does not fit in GPU memory and would run from system RAM. Only about "
         "7 GB is available and 2 GB of that is kept free for the rest of the system, leaving about 5 GB usable. The weights are "
         "memory-mapped, so the machine pages them in and out until it stops responding and the OS kills the app. Use a "
         "smaller or more quantized GGUF, free memory, or set UNSLOTH_ALLOW_HOST_OFFLOAD=1 to load it anyway.\n")
# its unified-memory APU refusal (_apu_ram_shortfall_message): the weights, 24 GB, against 14 GB available
APU = ("Failed to load model: This model needs about 24 GB but only about 14 GB of memory is available. On a unified-memory "
       "APU the weights load into system RAM, so a larger model is stopped by the OS mid-load. Use a smaller or more "
       "quantized GGUF, or free memory (on WSL, raise the memory limit in .wslconfig).\n")
VULKAN_IGPU = ("ggml_vulkan: 0 = AMD Radeon 840M Graphics (RADV GFX1152) (radv) | uma: 1 | fp16: 1 | bf16: 0 | warp size: 64 "
               "| shared memory: 65536 | int dot: 1 | matrix cores: KHR_coopmat\n")


def _evidence(ev, cause):
    return next(c["evidence"] for c in ev["causes"] if c["id"] == cause)


def test_studio_guard_is_a_host_ram_shortage():
    cause, conf, ev = top(GUARD)
    assert ev["runtime"] == "llama.cpp" and cause == "host-ram", conf
    assert ev["numbers"] == {"required": 9 * GiB, "available": 7 * GiB, "limit": 5 * GiB}
    assert any("9.00 GiB of the weights miss free VRAM, more than the 5.00 GiB of system RAM it leaves usable" in e
               and "UNSLOTH_ALLOW_HOST_OFFLOAD=1" in e for e in _evidence(ev, "host-ram"))


def test_studio_guard_with_an_igpu_named_reads_other():
    # llama.cpp's Vulkan device line says uma: 1 (the Radeon 840M shares system RAM): the guard may not have credited it
    cause, conf, ev = top(VULKAN_IGPU + GUARD)
    assert cause == "other", conf
    assert any("integrated GPU or unified memory" in e for e in _evidence(ev, "other"))


def test_studio_apu_guard_is_host_ram():
    cause, conf, ev = top(APU)
    assert ev["kind"] == "app.host_offload_guard" and ev["form"] == "apu" and ev["runtime"] == "llama.cpp"
    assert ev["numbers"] == {"required": 24 * GiB, "available": 14 * GiB}
    assert cause == "host-ram", conf
    assert any("the weights (24.00 GiB) are more than the 14.00 GiB of memory available on this unified-memory APU" in e
               and "UNSLOTH_ALLOW" not in e for e in _evidence(ev, "host-ram"))
    # its own words name unified memory hyphenated: no integrated-GPU reading of its own line, host-ram stays with one named
    assert top(VULKAN_IGPU + APU)[0] == "host-ram"


def test_s2_patterns_linear():
    from support.regex_time import assert_each_fast
    from gpu_garden.memory.triage.fact_patterns import FACTS
    from gpu_garden.memory.triage.other_runtimes import STUDIO_APU_GUARD
    n = 1 << 20
    igpu = dict(FACTS)["igpu_named"]
    assert igpu.search("| uma: 1 |") and igpu.search("AMD Radeon 8060S Graphics") and not igpu.search("| uma: 0 |")
    assert not igpu.search("On a unified-memory APU") and not igpu.search("AMD Radeon RX 7900 XTX")
    assert_each_fast([
        (STUDIO_APU_GUARD.search, ["This model needs about 1 GB " * (n // 28), "This model needs about " + "1" * n]),
        (igpu.search, ["Radeon " * (n // 7), "Radeon(TM) " + "1" * n, "ntegrated " * (n // 10)]),
    ])


# --- D4 ----------------------------------------------------------------------------------------------------------------
def test_vllm_settings_read_from_a_json_dump():
    from gpu_garden.memory.triage.fact_patterns import FACTS
    fact = dict(FACTS)
    line = '{"model": "org/model-7b", "gpu_memory_utilization": 0.85, "max_model_len": 4096}'
    assert fact["vllm_util"].search(line).group(1) == "0.85"
    assert fact["vllm_maxlen"].search(line).group(1) == "4096"


def test_a_table_of_more_than_sixteen_rows_keeps_its_header():
    # 20 process rows of 100 MiB (pids 5001-5020): 2000 MiB = 1.95 GiB held by other programs (>= SMI_APPS_MIN, 1.5 GiB);
    # with 16 lines kept the header was pushed out and nothing was read
    rows = "".join(f"{5000 + i}, /opt/srv/bin/worker-{i}, 100 MiB\n" for i in range(1, 21))
    cause, _, ev = top(TORCH_OOM_2250 + SMI_APPS_HEADER + rows)
    assert cause == "other-process"
    assert any("holding 1.95 GiB" in e for e in _held(ev)), _held(ev)
