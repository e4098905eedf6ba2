"""fix68h: mend review rev68a's findings on fix68a (vLLM run bounds, issue 14). Logs under data/fix68h/ (README: each
one's thread), numbers exact, prose and paths rewritten. Every test goes through the whole scan (engine.triage_text)."""
from pathlib import Path

from gpu_garden.memory.triage import engine

DATA = Path(__file__).parent / "data" / "fix68h"
FIX68A = Path(__file__).parent / "data" / "fix68a"


def _answer(name_or_text):
    text = (DATA / name_or_text).read_text() if name_or_text.endswith(".log") else name_or_text
    res = engine.triage_text(text)
    return res, res["events"][res["headline"]]


def _run(name_or_text):
    """What the headline failure reads as its run's: cause, utilization, max model len, KV GiB, the guide's serve lines."""
    res, ev = _answer(name_or_text)
    n = ev["numbers"]
    return res["cause"], n.get("gpu_memory_utilization_ratio"), n.get("max_model_len_tokens"), \
        (n.get("kv_available"), n.get("kv_max_tokens")), [ln for ln in engine.render_human(res).splitlines() if "vllm serve" in ln]


# 1 (rev68a #1). fix68a kept a failed run's values aside when the next run started (vllm_run.pin), but not where the run
# ended: once 17 later runs pushed the next starts out of the last 16, the first run reached to the next start still kept
# and read run 2's values as its own. data/fix68h/f_*: run 1 fails at graph capture printing no utilization (vLLM's
# default), run 2 sets 0.50; with 18 runs the guide read 0.50 (its command 0.49), with 16 runs the default. The pinned
# run now keeps the next run's start as its end.
def test_a_pinned_run_ends_where_the_next_run_starts():
    control = _run("f_16_runs_first_default_util.log")
    assert control[0] == "graph-capture" and control[1] is None and control[2] == 124000, control[:4]
    assert control[3] == (int(2.97 * 2**30), 150745), control[3]
    assert _run("f_18_runs_first_default_util.log") == control


def test_a_pinned_run_reads_no_later_runs_kv_figures():
    """The same with run 1's KV lines gone: a run that printed none reads none, not run 2's 1.10 GiB."""
    def no_kv(name):
        return "".join(ln for i, ln in enumerate((DATA / name).read_text().splitlines(True))
                       if not (i < 6 and ("KV cache" in ln or "Maximum concurrency" in ln)))
    control = _run(no_kv("f_16_runs_first_default_util.log"))
    assert control[3] == (None, None), control[:4]
    assert _run(no_kv("f_18_runs_first_default_util.log")) == control
