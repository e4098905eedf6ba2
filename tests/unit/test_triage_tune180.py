"""Round 75 (batches 180-187): the shell's "Killed" in a zh_CN locale (glibc's strsignal(SIGKILL) translated, "已杀死").
Modelled on danijar/dreamerv3#203 (a training run's last metric lines, then the shell's localized notice); text rewritten."""
from gpu_garden.memory.triage import engine as triage

_RUN = ("Writing metrics: /home/someone/runs/agent/metrics.jsonl\n"
        "episode/score 2.0 / episode/length 120 / fps/train 980.2\n")


def test_zh_cn_killed_line_reads_as_the_oom_killer():
    res = triage.triage_text(_RUN + "已杀死\n")
    assert res["found"]
    ev = res["events"][res["headline"]]
    assert ev["kind"] == "os.oom_killer"
    assert res["cause"] == "host-ram"
    assert ev["device_kind"] == "cpu"


def test_zh_cn_killed_word_inside_prose_is_not_a_kill():
    # only a line of its own is the shell's notice; the same characters inside a sentence are not
    res = triage.triage_text(_RUN + "上次的进程已杀死了，现在重新开始训练\n")
    assert not res["found"]
