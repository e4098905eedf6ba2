"""Round 79 (batches 212-217), written from the runtimes' own message formats:
- the kernel's OOM-killer line for a memory cgroup's limit ("Memory cgroup out of memory: Killed process ...", mm/oom_kill.c,
  other_patterns.KILLED), modelled on the training notes committed to tungd/tinystory-vn (a Colab VM's data preparation).
Sizes, pids and paths are made up; the expected values are worked out by hand from the lines."""
import time

from gpu_garden.memory.triage import engine as triage


def _head(text):
    res = triage.triage_text(text)
    assert res["found"], text
    return res, res["events"][res["headline"]]


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
    t = time.perf_counter()
    triage.triage_text("Memory cgroup out of memory: " + "Kill " * 40000 + "\n")
    assert time.perf_counter() - t < 5.0


