"""Round 80 (batches 218-240), written from the runtime's own message format:
- Slurm's task/cgroup plugin reporting that the kernel killed tasks of a step under the job's memory cgroup ("Detected <n>
  oom_kill event(s) in StepId=<job>.<step>. Some of the step tasks have been OOM Killed.", Slurm 21.08 on;
  other_patterns.KILLED), modelled on the SLURM post-mortems committed to hurryingauto3/navsim-ijepa-planning-agent
  (a 16-GPU DDP training whose data-loader workers ran the nodes' host memory out).
Job ids, counts and timestamps are made up; the expected values are worked out by hand from the lines."""

from gpu_garden.memory.triage import engine as triage
from support.triage_event import last_event as _head  # (result, the headline event)
from support.regex_time import cpu_limit, cpu_now




def test_slurm_oom_kill_events_line_is_the_oom_killer():
    res, ev = _head("slurmstepd: error: Detected 2 oom_kill events in StepId=4711.0. Some of the step tasks have been OOM Killed.\n"
                    "srun: error: node017: task 3: Out Of Memory\n")
    assert (ev["kind"], ev["device_kind"], ev["numbers"]) == ("os.oom_killer", "cpu", {})
    assert res["cause"] == "host-ram"


def test_slurm_single_event_quoted_cut_after_the_step():
    # one event is "event" (the plugin's plural suffix is empty); a write-up's quotation stops after the step's id
    res, ev = _head("[2025-03-01T10:00:00.123] error: Detected 1 oom_kill event in StepId=99.batch\n")
    assert ev["kind"] == "os.oom_killer" and res["cause"] == "host-ram"


def test_slurm_lines_repeated_in_waves():
    res, ev = _head("[2025-03-01T10:00:01.000] error: Detected 3 oom_kill events in StepId=7.0\n"
                    "[2025-03-01T10:00:03.000] error: Detected 5 oom_kill events in StepId=7.0\n"
                    "[rank2]:[W301 10:00:09.000] Failed to check the \"should dump\" flag on TCPStore\n")
    assert ev["kind"] == "os.oom_killer" and res["cause"] == "host-ram"


def test_older_slurm_wording_still_read():
    # before 21.08: "Detected <n> oom-kill event(s) in step <job>.<step> cgroup." (read by "oom-kill" before this round)
    res, ev = _head("slurmstepd: error: Detected 1 oom-kill event(s) in step 123.batch cgroup. Some of your processes may have "
                    "been killed by the cgroup out-of-memory handler.\n")
    assert ev["kind"] == "os.oom_killer" and res["cause"] == "host-ram"


def test_a_counter_named_oom_kill_is_not_a_kill():
    # the cgroup's memory.events counter and a monitoring table name oom_kill without Slurm's "Detected <n> ... in"
    for text in ("memory.events: low 0 high 0 max 0 oom 0 oom_kill 0\n",
                 "| oom_kill events | alert when above zero |\n"):
        res = triage.triage_text(text)
        assert not res["found"] or res["events"][res["headline"]]["kind"] != "os.oom_killer", text


def test_slurm_form_stays_linear():
    for line in ("Detected " + "9" * 60000 + " oom_kill events in", "Detected 1 " * 20000 + "oom_kill event"):
        t = cpu_now()
        triage.triage_text(line + "\n")
        assert cpu_now() - t < cpu_limit(5.0)
