"""fix68a: mend the triage findings the last reviews proved and left (rev67i #3, #4; rev67g; issue 14). Logs under
data/fix68a/ (README: each one's thread), numbers exact, prose and paths rewritten. Every test goes through the whole scan
(engine.triage_text, the CLI's path, or Scan.feed_text where a fact is checked)."""
from pathlib import Path

from gpu_garden.memory.triage import engine
from support import triage_event
from gpu_garden.memory.triage.scan import Scan

DATA = Path(__file__).parent / "data" / "fix68a"


def _answer(name_or_text):
    return triage_event.answer(DATA, name_or_text)


def _facts(text):
    s = Scan()
    s.feed_text(text)
    return s.facts


def _serve_lines(res):
    """The guide's `vllm serve` lines' flags (after the model: the log's model name is no run setting here)."""
    return [ln.split(" ", 3)[3] for ln in engine.render_human(res).splitlines() if ln.startswith("vllm serve")]


# 1 (rev67i #3). A `vllm serve` run stopped with ^C, then `python offline.py` (an offline LLM(...) run, no serve line of
# its own) fails at graph capture: with one `vllm serve` line the whole log was one run, and the window read back before
# the failure kept the serve line's flags just before it, so the guide's commands carried the serve run's
# --kv-cache-dtype fp8, --max-model-len 32768, --trust-remote-code, --max-num-seqs 8 and its 0.90. A Python launch is
# now a run's start (vllm_launch.py); the offline run reads only what it prints itself. Control: the offline run alone.
def test_an_offline_run_after_a_serve_run_has_no_serve_flags():
    got = []
    for name in ("b_serve_then_offline_llm.log", "b0_offline_alone.log"):
        res, ev, said = _answer(name)
        n = ev["numbers"]
        got.append((res["cause"], n.get("gpu_memory_utilization_ratio"), n.get("max_model_len_tokens"), _serve_lines(res)))
    assert got[0] == got[1], got
    assert got[0][0] == "graph-capture" and got[0][1] is None and got[0][2] is None, got[0]
    flags = " ".join(got[0][3])
    for gone in ("--kv-cache-dtype", "--max-model-len", "--trust-remote-code", "--max-num-seqs 8 "):
        assert gone not in flags, flags


def test_a_client_script_beside_a_background_server_is_no_new_run():
    """`vllm serve ... &` then `python bench.py`: the server's failure after it keeps the server's flags."""
    lines = (DATA / "b_serve_then_offline_llm.log").read_text().splitlines(True)
    serve = lines[0].rstrip("\n") + " &\n"
    failing = [ln for ln in lines[7:] if "ERROR" in ln]
    text = serve + "".join(lines[1:3]) + "\n$ python bench.py --num-prompts 100\n" + "".join(failing)
    res, ev, said = _answer(text)
    flags = " ".join(_serve_lines(res))
    assert "--kv-cache-dtype fp8" in flags and "--max-model-len 32768" in flags, flags
    # the same in the foreground, stopped with ^C first: a new run, no flags ((fix68h, rev68a #2) with no end shown, a
    # client as after `&`: test_triage_fix68h)
    bare = _answer(text.replace(" &\n", "\n", 1).replace("\n$ python", "\n^C\n$ python"))[0]
    assert "--kv-cache-dtype" not in " ".join(_serve_lines(bare))


# 2 (rev67i #4). The values kept by line (vllm_run.RUN_KEPT, facts.LINE_KEPT: the last 16) lost the first, failing run's
# flags and figures once 17 or more `vllm serve` runs followed in one log: with 18 runs its --max-num-seqs 1,
# FLASHINFER, --kv-cache-dtype nvfp4 and its 0.98 gave way to the later runs' 0.90 and --max-num-seqs 64. A run a failure
# lay in is now kept aside when the next run starts (vllm_run.pin). data/fix68a/d_*: rev67i's logs, the 16-run one the
# control (the same first run, fewer runs after it).
def _d(name_or_text):
    res, ev, said = _answer(name_or_text)
    n = ev["numbers"]
    return res["cause"], n.get("gpu_memory_utilization_ratio"), n.get("max_model_len_tokens"), \
        [ln for ln in engine.render_human(res).splitlines() if "vllm serve" in ln]


def test_the_first_failing_run_keeps_its_flags_after_many_runs():
    control = _d("d_16_runs_first_fails.log")
    assert control[1] == 0.98 and control[2] == 124000, control
    assert control[3][0].startswith("VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve"), control[3]
    assert "--kv-cache-dtype nvfp4" in control[3][0] and any("--max-num-seqs 1 " in ln for ln in control[3]), control[3]
    assert _d("d_18_runs_first_fails.log") == control
    lines = (DATA / "d_18_runs_first_fails.log").read_text()
    later = lines[lines.index("\n$ vllm serve") + 1:]
    assert _d(lines + later * 20) == control      # 200 runs after it


def test_kept_runs_stay_bounded():
    """Every run fails: only the last PINNED_RUNS failed runs are kept aside, each with at most RUN_KEPT values a key."""
    from gpu_garden.memory.triage import vllm_run
    text = (DATA / "d_16_runs_first_fails.log").read_text()
    first = text[:text.index("\n$ vllm serve") + 1]
    f = _facts(first * 100)
    runs = f["vllm_pinned"]
    assert len(runs) == vllm_run.PINNED_RUNS
    assert all(len(v) <= vllm_run.RUN_KEPT for run in runs.values() for v in run.values())


# 3 (rev67g). WSL's `/mnt/c/Users/...` frames (a Windows drive mounted under WSL) voted darwin in the OS vote: "/Users/"
# anywhere in a path was a Mac's home. /Users/ now votes darwin only at a path's start, and /mnt/<drive>/ votes Linux
# (and WSL). data/fix68a/wsl_winpath_driver.log: rev67g's log (Comfy-Org/ComfyUI#13210's offload-stream OOM under WSL2,
# one pasted Windows path).
def _frame(path):
    return _facts(f'  File "{path}", line 106, in synchronize\n')["os_votes"]


def test_wsl_mounted_drive_frames_are_no_mac():
    text = (DATA / "wsl_winpath_driver.log").read_text()
    votes = _facts(text)["os_votes"]
    assert votes["darwin"] == 0 and votes["linux"] > votes["windows"], votes
    no_kernel = "".join(ln for ln in text.splitlines(True) if not ln.startswith("Linux version"))
    res, ev, said = _answer(no_kernel)        # no kernel line: the frames alone say Linux (before: a windows/darwin tie)
    assert ev["platform"]["os"] == "linux", ev["platform"]
    assert _frame("/mnt/c/Users/ana/ComfyUI/main.py")["darwin"] == 0
    assert _frame("C:/Users/ana/ComfyUI/main.py")["darwin"] == 0
    assert _frame("/mnt/d/models/run.py")["linux"] == 1
    assert _frame("/Users/ana/ComfyUI/main.py")["darwin"] == 1       # a Mac's home still is one
    assert _frame("/mnt/data/run.py")["linux"] == 0                  # a mount that is no drive letter says nothing


def test_a_tie_with_wsl_kernel_line_stays_linux():
    """fix67m's tie-break, kept: the same log with its frame off /mnt/c/ ties windows and linux; WSL's kernel line settles it."""
    from gpu_garden.memory.triage import env as env_mod
    text = (DATA / "wsl_winpath_driver.log").read_text().replace("/mnt/c/Users/ana/ComfyUI", "/srv/ComfyUI")
    s = Scan()
    s.feed_text(text)
    votes = s.facts["os_votes"]
    assert votes["wsl"] and votes["linux"] == votes["windows"] == 1 and votes["darwin"] == 0, votes
    got = env_mod.infer(s, s.incidents[-1], {})
    assert (got["os"], got["os_tied"]) == ("linux", False), got


# 4 (rev67g). A command spread over lines was read as one only where its lines end in bash's `\`: Windows cmd's ` ^` and
# PowerShell's `` ` `` left `-q fp8` on a later line without its `vllm serve` (no quantization read). They are joined as
# `\` is now (vllm_short_q.before), at the line's end after a space, one shell's mark a command. The failure: fix67f's
# vllm-project/vllm#31273 Qwen2.5-72B fp8 load tail (read with -q fp8: "should fit", cause other).
FP8_TAIL = (Path(__file__).parent / "data" / "fix67f" / "vllm_31273_fp8_load_oom_tail.log").read_text()
MODEL = "Qwen/Qwen2.5-72B-Instruct"


def _quant(command):
    f = _facts(command + FP8_TAIL)
    return f["vllm_wflags"].get("quant")


def test_cmd_caret_and_powershell_backtick_lines_are_one_command():
    for mark in ("^", "`", "\\"):
        cmd = f"> vllm serve {MODEL} {mark}\n    --max-model-len 32768 {mark}\n    -q fp8\n"
        assert _quant(cmd) == "fp8", mark
        res, ev, said = _answer(cmd + FP8_TAIL)
        assert res["cause"] == "other" and "should fit" in said, (mark, res["cause"], said)


def test_only_a_line_end_mark_of_one_shell_joins():
    assert _quant(f"> vllm serve {MODEL}^\n    -q fp8\n") is None              # no space before ^: no cmd continuation
    assert _quant(f"> vllm serve {MODEL} ^ --x\n    -q fp8\n") is None         # ^ inside the line
    assert _quant(f"> vllm serve {MODEL} ^\n    --max-model-len 32768 `\n    -q fp8\n") is None     # two shells' marks
    assert _quant(f"> vllm serve {MODEL}\n```\n$ pip install -q fp8\n") is None    # a Markdown fence is no backtick continuation
    assert _quant(f"> vllm serve {MODEL}\n      ^^^^^^\n    -q fp8\n") is None     # Python's ^^^ marker line


# 4b (rev67g). A Kubernetes/Compose argument list (`command: ["vllm", "serve", M, "-q", "fp8"]`) was not read: `"-q",` is
# no ` -q ` on the line. Its items are read as the command they are (vllm_args_list.py), -q vLLM's only after a vLLM
# entry point in the same list.
def test_an_args_list_after_a_vllm_entry_point_sets_the_quantization():
    spec = f'    command: ["vllm", "serve", "{MODEL}", "-q", "fp8", "--max-model-len", "32768"]\n'
    assert _quant(spec) == "fp8"
    # the pod's log names the model as vLLM's worker prints it (gpu_model_runner's "Starting to load model %s...")
    load = f"INFO 01-08 10:02:11 [gpu_model_runner.py:1595] Starting to load model {MODEL}...\n"
    res, ev, said = _answer(spec + load + FP8_TAIL)
    assert res["cause"] == "other" and "should fit" in said, (res["cause"], said)
    res, ev, said = _answer(spec.replace('"-q", "fp8", ', "") + load + FP8_TAIL)      # control: no -q, no verdict
    assert res["cause"] != "other" and "should fit" not in said, (res["cause"], said)
    api = f"  command: ['python3', '-m', 'vllm.entrypoints.openai.api_server', '--model', '{MODEL}', '-q', 'fp8']\n"
    assert _quant(api) == "fp8"
    assert _quant(f'    args: ["--model", "{MODEL}", "-q", "fp8"]\n') is None           # no entry point in its list
    assert _quant('    command: ["pip", "install", "-q", "vllm"]\n') is None            # pip's quiet
    assert _quant('    command: ["vllm", "serve", "M"]\n    args: ["-q", "fp8"]\n') is None     # not the same list
