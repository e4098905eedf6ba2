"""fix67f: review rev67a's findings on the tri67 merge (issue 14). Logs under data/fix67f/, each modelled on the public
thread its test names (numbers exact, prose and paths rewritten). Every test goes through the whole scan
(engine.triage_text, the CLI's path)."""
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine

DATA = Path(__file__).parent / "data" / "fix67f"


def _answer(name_or_text, context=None):
    text = (DATA / name_or_text).read_text() if name_or_text.endswith(".log") else name_or_text
    res = engine.triage_text(text, context=context) if context else engine.triage_text(text)
    return res, res["events"][res["headline"]]


def _blocks(ev):
    return [(c.get("lang"), c["text"]) for c in ev["guide"]["commands"]]


# F1. A tied OS vote (modelled on Comfy-Org/ComfyUI#13210's offload-stream "CUDA error: out of memory" and
# smthemex/ComfyUI_EchoMimic#48's custom-node line naming a D:\...\python_embeded folder: one Windows vote, one Linux
# vote from the /home/ frames). comfy_launch took a tie as no OS, but the guides' "windows" condition followed env.infer's
# max() (Windows first), so a Linux log got only cmd's `set CUDA_LAUNCH_BLOCKING=1` (bash's `set` exports nothing).
# env.infer now records the tie (os_tied) and both read it; the driver guide prints bash's form and cmd's.
def test_a_tied_os_vote_prints_the_bash_rerun_and_cmds():
    res, ev = _answer("comfy_13210_tied_vote_driver.log")
    assert ev["guide"]["id"] == "cuda-driver-oom", ev["guide"]["id"]
    texts = [t for _, t in _blocks(ev)]
    assert "CUDA_LAUNCH_BLOCKING=1 python main.py" in texts, texts          # was only the cmd block
    assert "set CUDA_LAUNCH_BLOCKING=1\npython main.py" in texts, texts     # cmd's form kept, beside it
    assert "python_embeded" not in ev["guide"]["markdown"]                  # the pasted portable path: no portable line


def test_the_tie_is_decided_once_in_env_infer():
    from gpu_garden.memory.triage import comfy_launch, env as env_mod
    from gpu_garden.memory.triage.scan import Scan
    assert not hasattr(comfy_launch, "_vote_tied")                          # comfy_launch's own copy is gone
    s = Scan()
    s.feed_text((DATA / "comfy_13210_tied_vote_driver.log").read_text())
    assert dict(s.facts["os_votes"]) == {"windows": 1, "linux": 1}
    assert env_mod.infer(s, s.incidents[-1], {})["os_tied"] is True                 # (fix67m, rev67g F6) read from env.infer
    assert env_mod.infer(s, s.incidents[-1], {"platform": "linux"})["os_tied"] is False
    res = engine.triage_text((DATA / "comfy_13210_tied_vote_driver.log").read_text(), context={"platform": "linux"})
    ev = res["events"][res["headline"]]
    assert [t for _, t in _blocks(ev) if "CUDA_LAUNCH" in t] == ["CUDA_LAUNCH_BLOCKING=1 python main.py"]  # the host: no tie


# F6. ComfyUI Desktop on Windows (the #13210 failure, its frames under Desktop's @comfyorgcomfyui-electron folder): the
# sentence for the environment variable Desktop has no setting for gave bash's `CUDA_LAUNCH_BLOCKING=1 python main.py`;
# on Windows it is cmd's `set` line, then the launch line. macOS Desktop (ComfyUI.app) keeps the shell's form.
def test_windows_desktop_gets_cmds_set_form():
    res, ev = _answer("comfy_13210_desktop_windows_driver.log")
    md = " ".join(ev["guide"]["markdown"].split())
    assert "`set CUDA_LAUNCH_BLOCKING=1`, then `python main.py`" in md, md
    assert "`CUDA_LAUNCH_BLOCKING=1 python main.py`" not in md                 # was bash's form
    mac = (DATA / "comfy_13210_desktop_windows_driver.log").read_text().replace(
        r"C:\Users\ana\AppData\Local\Programs\@comfyorgcomfyui-electron\resources\ComfyUI\.venv\Lib",
        "/Applications/ComfyUI.app/Contents/Resources/ComfyUI/.venv/lib/python3.12").replace("\\", "/")
    res, ev = _answer(mac)
    md = " ".join(ev["guide"]["markdown"].split())
    assert "`CUDA_LAUNCH_BLOCKING=1 python main.py`" in md and "`set " not in md, md


# F2-F4. vLLM's short flag -q X (engine/arg_utils.py: add_argument("--quantization", "-q")). The load that fails is
# vllm-project/vllm#31273's Qwen2.5-72B fp8 load on a 139.72 GiB card (data/fix67f/vllm_31273_fp8_load_oom_tail.log); the
# command above it is written in the shapes users post: vllm-project/vllm#16128's `vllm serve` spread over `\` lines,
# #1479's `-q awq`, a docker run whose image is on the first line. With -q fp8 read, the 72.7 B weights at 1 byte should
# fit (cause "other", the should-fit verdict); unread, the run is taken as 16-bit and the verdict goes.
FP8_TAIL = "vllm_31273_fp8_load_oom_tail.log"
MODEL = "Qwen/Qwen2.5-72B-Instruct"
F2_COMMANDS = {
    "serve over lines": f"$ vllm serve {MODEL} \\\n    -q fp8 \\\n    --max-model-len 32768\n",
    "docker run over lines": ("$ docker run --runtime nvidia --gpus all -p 8000:8000 vllm/vllm-openai:v0.13.0 \\\n"
                              f"    --model {MODEL} \\\n    -q fp8 \\\n    --max-model-len 32768\n"),
    "api_server over lines": (f"$ python -m vllm.entrypoints.openai.api_server \\\n  --model {MODEL} \\\n"
                              "  --max-model-len 32768 \\\n  -q fp8\n"),
    "pip && serve": f"$ pip install -q vllm==0.13.0 && vllm serve {MODEL} -q fp8 --max-model-len 32768\n",
    "docker image on a later line": (f"$ docker run --gpus all \\\n  -p 8000:8000 \\\n  vllm/vllm-openai:v0.13.0 \\\n"
                                     f"  --model {MODEL} -q fp8\n"),
}


def _fp8_answer(command):
    res, ev = _answer(command + (DATA / FP8_TAIL).read_text())
    return res, ev, " ".join(e for c in ev["causes"] for e in c["evidence"])


@pytest.mark.parametrize("shape", sorted(F2_COMMANDS))
def test_a_q_flag_in_a_vllm_command_is_read_on_any_of_its_lines(shape):
    res, ev, said = _fp8_answer(F2_COMMANDS[shape])
    assert res["cause"] == "other" and "should fit" in said, (res["cause"], said)      # was activations, no verdict
    assert "72.7 B" in said or "70.0 GiB of weights" in said, said


# F3. -q after the word vllm in no vLLM command: git's and docker's quiet (modelled on vllm-project/vllm#4408: the
# WizardLM-2-8x22B start-up on an 80 GB A100, and its 1.50 GiB request on a 79.15 GiB card with 147.75 MiB free). The
# first line made "https" (or "vllm") the run's own method: `--quantization https` in the printed command.
@pytest.mark.parametrize("head", ["$ git clone -q https://github.com/vllm-project/vllm.git && cd vllm\n",
                                  "$ docker pull -q vllm/vllm-openai:v0.4.1\n"])
def test_a_quiet_git_or_docker_pull_is_no_quantization(head):
    import re
    tri67 = Path(__file__).parent / "data" / "tri67" / "vllm_4408_wizardlm_8x22b_a100_startup.log"
    res, ev = _answer(head + tri67.read_text())
    cmds = " ".join(c["text"] for c in ev["guide"]["commands"])
    assert not re.search(r"--quantization (https|vllm)\b", cmds), cmds
    res, ev = _answer(head + f"$ vllm serve {MODEL} --max-model-len 32768\n" + (DATA / "vllm_4408_bf16_load_oom_tail.log").read_text())
    assert res["cause"] == "weights-exceed-vram", res["cause"]            # was activations: "https" read as a 4-bit-ish method


# F4. -q=fp8 (argparse takes -q=X as -q X): the fact's line filter looked for " -q " only, so the line never reached it
def test_q_equals_is_read_through_the_scan():
    res, ev, said = _fp8_answer(f"$ vllm serve {MODEL} -q=fp8 --max-model-len 32768\n")
    assert res["cause"] == "other" and "should fit" in said, (res["cause"], said)


def test_both_facts_share_one_reading_of_q():
    from gpu_garden.memory.triage import fact_patterns, vllm_command, vllm_short_q
    from gpu_garden.memory.triage.scan import Scan
    assert vllm_short_q.SHORT in fact_patterns.VLLM_WEIGHT_FLAGS.pattern and vllm_short_q.SHORT in vllm_command.BATCHED_RE.pattern
    for cmd in list(F2_COMMANDS.values()) + [f"$ vllm serve {MODEL} -q=fp8\n"]:
        s = Scan()
        s.feed_text(cmd + (DATA / FP8_TAIL).read_text())
        assert (s.facts["vllm_wflags"].get("quant"), s.facts.get("vllm_own_quant")) == ("fp8", "fp8"), cmd
    for cmd in ("$ git clone -q https://github.com/vllm-project/vllm.git\n", "$ docker pull -q vllm/vllm-openai:v0.4.1\n",
                "!pip install -q -U vllm\n", "$ pip install -q vllm && echo -q done\n"):
        s = Scan()
        s.feed_text(cmd + (DATA / FP8_TAIL).read_text())
        assert (s.facts["vllm_wflags"].get("quant"), s.facts.get("vllm_own_quant")) == (None, None), cmd


def test_a_long_line_of_q_flags_stays_linear():
    """rev66e #3's 100 KB line of ' -q=a' (54 s when each -q searched the line again), through the whole scan."""
    import time
    t = time.perf_counter()
    res, ev, said = _fp8_answer("$ pip install vllm; vllm serve X" + " -q=a" * 20000 + " \\\n  -q fp8\n")
    assert time.perf_counter() - t < 10


# F5. The runner-up's guide took the top guide's phase even where the top is only a guess: a log that shows no phase
# (modelled on batch-545's gpt-oss-120b judge replica, the project's review document: one OOM message, 900.00 MiB asked
# with 679.38 MiB free of 79.19 GiB, two other processes at 3.66 and 2.02 GiB; its recorded answer is activations, the
# runner-up) gave activations the start-up guide of other-process. The phase applies only where the log shows it
# (guide_phase.shown): here vllm-project/vllm#4408's WizardLM start-up with the loader's load_weights frame.
def test_a_runner_up_keeps_its_guide_unless_the_log_shows_the_phase():
    from gpu_garden.memory.triage import guide_phase
    res, ev = _answer("vllm_gpt_oss_judge_no_phase_shown.log")
    (top, second) = ev["alternatives"][:2]
    assert (top["id"], top["guide"]["id"]) == ("other-process", "vllm-other-process"), top
    assert (second["id"], second["guide"]["id"]) == ("activations", "vllm-activations"), second   # was vllm-weights
    tri67 = Path(__file__).parent / "data" / "tri67" / "vllm_4408_wizardlm_8x22b_a100_startup.log"
    res, ev = _answer(tri67.read_text())          # no load frame, no sizing line: each cause's own guide
    assert ev["alternatives"][1]["guide"]["id"] == "vllm-activations", ev["alternatives"]
    res, ev = _answer("vllm_4408_wizardlm_load_weights_frame.log")      # the load shown: the start-up guide
    assert [a["guide"]["id"] for a in ev["alternatives"][:2]] == ["vllm-weights", "vllm-weights"], ev["alternatives"]
    assert guide_phase.phase("vllm-weights") == "startup"
