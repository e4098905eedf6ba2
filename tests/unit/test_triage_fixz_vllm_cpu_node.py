"""(fixZ) vLLM 0.20.2's CPU worker refuses the NUMA node's RAM in three ValueErrors (vllm/v1/worker/cpu_worker.py: __init__'s
start-up check, determine_available_memory's two KV cache checks). Each input below is built from the source's f-string with
plausible figures made up for this test (format_gib prints round(bytes / 2**30, 2)); no third-party log is quoted."""
import pytest

from gpu_garden.memory.triage import engine, render
from gpu_garden.memory.triage.error_patterns import VLLM_CPU_NODE
from support.cpu_oom import CPU_SNAP
from support.regex_time import cpu_limit, cpu_now

GIB = 1 << 30
MB = 1 << 20
PLATFORM = "INFO 01-01 00:00:00 [__init__.py:239] Automatically detected platform cpu.\n"
# cpu_worker.py __init__ (made-up figures: 9.87 of 62.58 GiB available, --gpu-memory-utilization 0.92 asks 57.57 GiB)
START = ("ValueError: Available memory on node 0 (9.87/62.58 GiB) on startup is less than desired CPU memory utilization "
         "(0.92, 57.57 GiB). Decrease --gpu-memory-utilization or reduce CPU memory used by other processes.\n")
# determine_available_memory, --kv-cache-memory-bytes set (made-up: 8 GiB asked, 3.21 of 31.25 GiB available)
KV_EXPLICIT = ("ValueError: Available memory on node 0 (3.21/31.25 GiB) on kv cache allocation is less than requested memory "
               "for kv (8.0 GiB). Decrease --kv-cache-memory-bytes, VLLM_CPU_KVCACHE_SPACE, or reduce CPU memory used by other "
               "processes.\n")
# determine_available_memory, automatic (made-up: 57.57 GiB share, worker RSS 15.07 GiB, so 42.5 GiB for kv; 4.12 available)
KV_AUTO = ("ValueError: Available memory on node 0 (4.12/62.58 GiB) on kv cache allocation is less than requested memory for kv "
           "(42.5/57.57 GiB). Reduce CPU memory used by other processes.\n")
# the same, the worker's RSS (17.96 GiB) past its 15.62 GiB share: the kv figure negative (made-up figures)
KV_OVER = ("ValueError: Available memory on node 1 (20.12/31.25 GiB) on kv cache allocation is less than requested memory for kv "
           "(-2.34/15.62 GiB). Reduce CPU memory used by other processes.\n")
# (rev54) the same automatic check with 30.0 GiB available (made-up): 62.58 - 30.0 - 15.07 = 17.51 GiB held by others, less
# than the 42.5 GiB KV cache but more than its 12.5 GiB shortfall (42.5 - 30.0): freeing them would serve it
KV_AUTO_SHORT = ("ValueError: Available memory on node 0 (30.0/62.58 GiB) on kv cache allocation is less than requested memory "
                 "for kv (42.5/57.57 GiB). Reduce CPU memory used by other processes.\n")

# expected, by hand from the figures above: cause order, guide, and every figure (GiB) the message states or implies
CASES = {
    "start": (START, ["other-process", "host-ram"], "vllm-other-process-ram",
              {"available": 9.87, "total": 62.58, "requested": 57.57, "other_processes": 62.58 - 9.87},
              ["available 9.87 GiB", "total 62.58 GiB", "requested 57.57 GiB", "other processes 52.71 GiB",
               "gpu memory utilization 0.92"]),
    "kv_explicit": (KV_EXPLICIT, ["host-ram", "other-process"], "vllm-host-ram",
                    {"available": 3.21, "total": 31.25, "kv_needed": 8.0}, ["available 3.21 GiB", "KV cache needed 8.00 GiB"]),
    "kv_auto": (KV_AUTO, ["other-process", "host-ram"], "vllm-other-process-ram",
                {"available": 4.12, "total": 62.58, "kv_needed": 42.5, "requested": 57.57, "this_process": 15.07,
                 "other_processes": 62.58 - 4.12 - 15.07}, ["this process 15.07 GiB", "other processes 43.39 GiB"]),
    "kv_auto_short": (KV_AUTO_SHORT, ["other-process", "host-ram"], "vllm-other-process-ram",
                      {"available": 30.0, "kv_needed": 42.5, "this_process": 15.07, "other_processes": 62.58 - 30.0 - 15.07},
                      ["other processes 17.51 GiB"]),
    "kv_over": (KV_OVER, ["host-ram"], "vllm-host-ram",
                {"available": 20.12, "total": 31.25, "requested": 15.62, "this_process": 17.96}, ["this process 17.96 GiB"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("head", ["", PLATFORM], ids=["alone", "with-platform-line"])
def test_vllms_cpu_worker_refusal_is_read_with_its_cause_guide_and_figures(name, head):
    text, causes, guide, figures, shown = CASES[name]
    ev = engine.triage_text(head + text, {"snapshot": CPU_SNAP, "platform": "linux"})["events"][-1]
    assert (ev["runtime"], ev["device_kind"], ev["kind"]) == ("vllm", "cpu", "vllm.cpu_node"), ev
    assert [c["id"] for c in ev["causes"][:len(causes)]] == causes, ev["causes"]
    assert ev["guide"]["id"] == guide, ev["guide"]
    for key, gib in figures.items():
        assert abs(ev["numbers"][key] - gib * GIB) <= 0.006 * GIB, (key, ev["numbers"])
    assert "kv_needed" not in ev["numbers"] or name != "kv_over"
    # (rev54) kv_over: 31.25 - 20.12 - 17.96 < 0, the worker's own RSS covers all that is not available: no other's figure
    assert "other_processes" not in ev["numbers"] or name != "kv_over", ev["numbers"]
    panel = render.render_numbers(ev["numbers"])
    for part in shown:
        assert part in panel, panel


def test_the_cpu_node_regex_is_linear_on_1_mb():
    for text in ("Available memory on node 0 (" * (MB // 28), "Available memory on node 0 (" + "9" * MB,
                 "Available memory on node 0 (1.0/2.0 GiB) on kv cache allocation is less than requested memory for kv (" + "1" * MB,
                 "Available memory on node 0 (1.0/2.0 GiB) on startup is less than desired CPU memory utilization (" + "0." * (MB // 2)):
        t = cpu_now()
        VLLM_CPU_NODE.search(text)
        assert cpu_now() - t < cpu_limit(1.0), text[:40]


@pytest.mark.parametrize("text", [
    "ValueError: Available memory on node 0 (1.0/2.0 GiB) on startup is less than requested memory for kv (3.0 GiB).",
    "ValueError: Available memory on node 0 (1.0/2.0 GiB) on kv cache allocation is less than desired CPU memory "
    "utilization (0.9, 1.8 GiB).",
])
def test_a_sentence_spliced_from_two_checks_is_not_read_and_does_not_raise(text):
    # (rev54) the pattern's "startup|kv cache" and its two tails are separate alternatives: a line pairing one check's head
    # with the other's tail matched, and the reader took None for a figure (TypeError / AttributeError out of triage_text)
    ev = engine.triage_text(text)["events"]
    assert not ev or ev[-1]["kind"] != "vllm.cpu_node", ev
