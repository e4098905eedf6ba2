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
