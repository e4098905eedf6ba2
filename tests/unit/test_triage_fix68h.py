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


# 2 (rev68a #2, a regression of fix68a). Any `python x.py` line after a foreground `vllm serve` became a new run, so the
# usual issue layout (the server's command, the client's `python benchmarks/benchmark_serving.py ...`, then the server's
# log) lost the server's flags: data/fix68h/i_serve_then_client_cmd.log's serving OOM read no 0.95, no --max-model-len
# 32768 and no --trust-remote-code, and advised the --kv-cache-dtype fp8 the server already ran. A Python line is a new run
# only once the server's run shows its end (a failure in it, ^C / KeyboardInterrupt, vLLM's shutdown line).
def _flags(text):
    res, ev = _answer(text)
    n = ev["numbers"]
    serve = [ln for ln in engine.render_human(res).splitlines() if ln.startswith("vllm serve")]
    return n.get("gpu_memory_utilization_ratio"), n.get("max_model_len_tokens"), serve


def test_a_client_command_after_a_foreground_server_is_no_new_run():
    res, ev = _answer("i_serve_then_client_cmd.log")
    assert res["cause"] == "activations", res["cause"]
    util, maxlen, serve = _flags("i_serve_then_client_cmd.log")
    assert (util, maxlen) == (0.95, 32768), (util, maxlen)
    assert serve and all("--trust-remote-code" in ln and "--kv-cache-dtype fp8" in ln for ln in serve), serve
    assert "--kv-cache-dtype fp8`" not in engine.render_human(res)       # no advice to set what the server ran


B = (FIX68A / "b_serve_then_offline_llm.log").read_text()
ENDS = {"^C": "^C\n",
        "KeyboardInterrupt": "(APIServer pid=2210) KeyboardInterrupt\n",
        "shutdown": "(APIServer pid=2210) INFO 09-18 14:23:02 [launcher.py:80] Shutting down FastAPI HTTP server.\n",
        "failure": "(EngineCore pid=2301) ERROR 09-18 14:23:14 [core.py:1102] torch.OutOfMemoryError: CUDA out of memory. "
                   "Tried to allocate 1.20 GiB. GPU 0 has a total capacity of 22.36 GiB of which 620.88 MiB is free.\n"}


def test_a_python_run_after_a_server_that_ended_is_a_new_run():
    """fix68a's b log (serve at 0.90 / 32768 / fp8 / --trust-remote-code, then `python offline.py` failing at capture):
    with each end in place of its ^C the offline run reads no server flag; with none it is the server's client."""
    assert "^C\n" in B
    for name, end in ENDS.items():
        util, maxlen, serve = _flags(B.replace("^C\n", end))
        flags = " ".join(serve)
        assert util is None and maxlen is None and "--trust-remote-code" not in flags, (name, util, maxlen, serve)
        assert "--kv-cache-dtype fp8" not in flags, (name, serve)
    util, maxlen, serve = _flags(B.replace("^C\n", ""))
    assert (util, maxlen) == (0.9, 32768) and all("--trust-remote-code" in ln for ln in serve), (util, maxlen, serve)


def test_the_end_counts_when_read_back_from_the_window():
    """Past the log's first 512 KiB the server's idle lines, its ^C and the Python line are read only from the window before
    the failure (window.read_context): the same runs there."""
    fill = "(APIServer pid=2210) INFO 09-18 14:22:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s\n" * 6000
    text = B.replace("^C\n", fill + "^C\n")
    assert len(text) > 600 << 10
    assert _flags(text)[:2] == (None, None)
    assert _flags(text.replace("^C\n", ""))[:2] == (0.9, 32768)


# 3 (rev68a #3). A command line's prompt took no conda/venv environment before it ("(base) user@box:~$ "), and a Python
# launch was only `python ...`: rev68a's h log (fix68a's b log with a conda prompt on both command lines) read neither
# the serve line's flags nor the offline run's start. The prompt is one constant (vllm_own_flags.PROMPT, read by
# OWN_LINE and vllm_launch.LINE); a launch is also `uv run python`, `conda run -n X python`, `torchrun ... x.py`.
CONDA = "(base) ana@box:~/qwen$ "


def test_an_offline_run_launched_another_way_is_its_own_run():
    alone = _flags((FIX68A / "b0_offline_alone.log").read_text())
    assert alone[:2] == (None, None), alone
    for serve, launch in ((CONDA, CONDA + "python offline.py"), ("(venv) user@box:~/qwen$ ", "(venv) user@box:~/qwen$ python offline.py"),
                          ("$ ", "$ uv run python offline.py"), ("$ ", "$ conda run -n vllm --no-capture-output python offline.py"),
                          ("$ ", "$ torchrun --nproc-per-node 1 offline.py"), ("$ ", "$ torchrun --standalone offline.py")):
        text = B.replace("$ vllm serve", serve + "vllm serve", 1).replace("$ python offline.py", launch, 1)
        util, maxlen, serve_lines = _flags(text)
        flags = " ".join(serve_lines)
        assert (util, maxlen) == (None, None) and "--trust-remote-code" not in flags and "fp8" not in flags, (launch, util, serve_lines)


def test_a_server_behind_a_conda_prompt_keeps_its_flags():
    text = (DATA / "i_serve_then_client_cmd.log").read_text().replace("$ ", CONDA)
    assert text.count(CONDA) == 2
    util, maxlen, serve = _flags(text)
    assert (util, maxlen) == (0.95, 32768) and serve and all("--trust-remote-code" in ln for ln in serve), (util, maxlen, serve)


def test_no_launch_where_none_ran():
    from gpu_garden.memory.triage import vllm_launch
    for text in ("(EngineCore pid=2301) INFO python offline.py", "$ conda run -n vllm", "$ torchrun --nproc-per-node 1",
                 "$ pip install torchrun x.py", "$ uv run python -m vllm.entrypoints.openai.api_server --model m",
                 "(APIServer pid=2210) vllm serve m"):
        assert not vllm_launch.LINE.search(text), text


def test_the_command_line_regexes_read_linear():
    from support.regex_time import assert_each_fast
    from gpu_garden.memory.triage import vllm_launch, vllm_own_flags
    n = 1 << 18
    texts = ["(" * n, "(a) " * n, "(a)" + " " * n, "a$" * n, "$ torchrun " + "--a b " * n, "$ torchrun " + "--a " * n + "x",
             "$ uv run " + "-a b.py " * n, "$ conda run " + "-n x " * n + "python", "$ " + "A=1 " * n, "$ python " + "-u " * n,
             "$ torchrun " + "--a=" + "b" * n, "$ python " + "x" * n]
    assert_each_fast([(rx.search, texts) for rx in (vllm_launch.LINE, vllm_own_flags.OWN_LINE, vllm_launch.START[1])])
