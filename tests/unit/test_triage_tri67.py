"""tri67: guide and reading defects session 66's reviewers left (issue 14). Logs under data/tri67/, each modelled on the
public thread its test names (numbers exact, prose and paths rewritten)."""
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine

DATA = Path(__file__).parent / "data" / "tri67"


def _answer(name_or_text):
    text = (DATA / name_or_text).read_text() if name_or_text.endswith(".log") else name_or_text
    res = engine.triage_text(text)
    return res, res["events"][res["headline"]]


def _said(ev, cause=None):
    return " ".join(e for c in ev["causes"] if cause in (None, c["id"]) for e in c["evidence"])


# 1. vLLM's "should fit" (class 7): vLLM's short flag for --quantization is -q (vllm/engine/arg_utils.py:
# model_group.add_argument("--quantization", "-q", ...)); pip's `install -q -U vllm` is quiet and upgrade
@pytest.mark.parametrize("line,want", [
    ("!pip install -q -U vllm", {}),
    ("$ pip install -q -U vllm==0.13.0", {}),
    ("$ uv pip install -q vllm", {}),
    ("$ python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct-AWQ -q awq", {"quant": "awq"}),
    ("$ vllm serve Qwen/Qwen2.5-72B-Instruct -q=fp8 --max-model-len 32768", {"quant": "fp8"}),
    ("$ vllm serve Qwen/Qwen2.5-72B-Instruct --quantization fp8", {"quant": "fp8"}),
])
def test_only_vllms_own_q_is_a_quantization(line, want):
    from gpu_garden.memory.triage import facts
    f = {"vllm_wflags": {}}
    facts._vllm_wflags(f, line)
    assert f["vllm_wflags"] == want           # was {"quant": "-u"} for pip's -q -U


def _scan(name):
    from gpu_garden.memory.triage.scan import Scan
    s = Scan()
    s.feed_text((DATA / name).read_text())
    return s.facts


NOTEBOOK = "vllm_31273_notebook_llm_fp8.log"     # vllm-project/vllm#31273's Qwen2.5-72B fp8 load, run from a notebook


def test_a_notebooks_pip_cell_is_no_quantization():
    """The notebook's `!pip install -q -U vllm` cell above the run: the whole scan holds no "-u" method (it made
    vllm_quant.precision answer "no size" and dropped the run's should-fit verdict)."""
    assert _scan(NOTEBOOK)["vllm_wflags"].get("quant") != "-u"


# 2. A Python call's quantization="fp8" is the user's method, as `--quantization fp8` is (vllm-project/vllm#31273's load,
# run as LLM(...) from a notebook): in flight on a 16-bit checkpoint, so vllm_quant.precision sizes its load at 16 bits
# and keeps 1 byte after; the engine config's unquoted quantization=fp8 is then the call's, not the checkpoint's
def test_an_llm_calls_fp8_is_read_as_the_flag_is():
    res, ev = _answer(NOTEBOOK)
    said = _said(ev, "other")
    assert res["cause"] == "other" and "should fit" in said, (res["cause"], _said(ev))   # was activations, no verdict
    weights = float(said.split("should fit: ")[1].split(" GiB")[0])
    assert 60 < weights < 80, said        # 72.7 B at 1 byte (fp8 kept), as the serve run's (test_triage_fix66d)
    # the same call with the engine's config line above it: the method is the call's own, so the command keeps it
    f = _scan(NOTEBOOK.replace(".log", "_config.log"))
    assert f["vllm_own_quant"] == "fp8" and f["vllm_wflags"]["quant"] == "fp8", f.get("vllm_own_quant")
    from gpu_garden.memory.triage import vllm_command
    assert vllm_command.params(f)["quant_flag"] == "--quantization fp8 "      # was "" ("already quantized")


@pytest.mark.parametrize("line,own", [
    ('    llm = LLM(model="Qwen/Qwen2.5-72B-Instruct", quantization="fp8", max_model_len=32768)', "fp8"),
    ("engine_args = EngineArgs(model=name, quantization='awq')", "awq"),
    ("with config: model='Qwen/Qwen2.5-72B-Instruct', quantization=fp8, enforce_eager=False", None),
])
def test_a_quoted_quantization_is_the_users(line, own):
    from gpu_garden.memory.triage import facts, vllm_command
    f = {}
    vllm_command.seen(f, None, line)
    assert f.get("vllm_own_quant") == own, f
    w = {"vllm_wflags": {}}
    facts._vllm_wflags(w, line)
    assert w["vllm_wflags"] == {"quant": own or "fp8"}


# 3. A Linux log whose OS vote ties (modelled on smthemex/ComfyUI_EchoMimic#48: a custom node's message names a
# D:\...\python_embeded folder, one Windows vote; the frames under /home/, one Linux vote): env.infer's max() takes the
# first of windows, linux, darwin, and the portable sign then counted. A tie is no OS: no Windows portable line, and
# with no other sign the manual install's `python main.py`
def test_a_tied_os_vote_gets_the_manual_launch_line():
    from gpu_garden.memory.triage import comfy_launch
    res, ev = _answer("comfy_echomimic48_linux_tied_vote.log")
    launches = [c["text"] for c in ev["guide"]["commands"] if "main.py" in c["text"]]
    assert launches and all(c.startswith("python main.py") for c in launches), launches   # was .\python_embeded\...
    assert "python_embeded" not in ev["guide"]["markdown"]           # nor the Windows note on the portable line
    # the vote as counted (one each), and the host's own platform is no tie: its Windows keeps the portable sign
    f = {"os_votes": {"windows": 1, "linux": 1}, "comfy_install": {"portable"}}
    env = {"runtime": "comfyui", "os": "windows", "os_tied": True}     # (fix67f) env.infer records the tie
    p = comfy_launch.params(env, f)          # no install shown: the guides' default {{launch}}, the manual line
    assert p.get("comfy_install") is None and not p.get("launch_unknown"), p
    assert p.get("launch", comfy_launch.LAUNCH["manual"]) == comfy_launch.LAUNCH["manual"]
    env["os_tied"] = False                        # the host's own platform, or Windows ahead: the portable build, as before
    assert comfy_launch.params(env, f, {"platform": "windows"})["launch"] == comfy_launch.LAUNCH["portable"]
    assert comfy_launch.params(env, f)["launch"] == comfy_launch.LAUNCH["portable"]


# 4. cuda-driver-oom.md's synchronous rerun for the log's shell (modelled on Comfy-Org/ComfyUI#13210: a Windows ComfyUI's
# offload stream synchronize raising "CUDA error: out of memory", its venv under a drive-letter path): the guides'
# "windows" condition (advice._conditions) picks cmd's `set` over bash's `VAR=1 cmd`, as the launch line follows the install
WIN_DRIVER = "comfy_13210_windows_cuda_error.log"


def _driver_cmds(text):
    res, ev = _answer(text)
    assert ev["guide"]["id"] == "cuda-driver-oom", ev["guide"]["id"]
    return ev["guide"], [c["text"] for c in ev["guide"]["commands"] if "CUDA_LAUNCH_BLOCKING" in c["text"]]


def test_the_synchronous_rerun_is_written_for_windows_cmd():
    g, cmds = _driver_cmds(WIN_DRIVER)
    assert cmds == ["set CUDA_LAUNCH_BLOCKING=1\npython main.py"], cmds      # was "CUDA_LAUNCH_BLOCKING=1 python main.py"
    assert "`$env:CUDA_LAUNCH_BLOCKING=1`" in g["markdown"]
    # the portable build's own launch line after the `set`
    portable = (DATA / WIN_DRIVER).read_text().replace("ComfyUI\\.venv", "ComfyUI_windows_portable\\python_embeded")
    assert _driver_cmds(portable)[1] == ["set CUDA_LAUNCH_BLOCKING=1\n" + r".\python_embeded\python.exe -s ComfyUI\main.py "
                                         "--windows-standalone-build"]


def test_the_synchronous_rerun_elsewhere_stays_bash_and_desktop_gets_its_sentence():
    text = (DATA / WIN_DRIVER).read_text()
    linux = text.replace("D:\\Apps\\ComfyUI\\.venv\\Lib", "/home/u/ComfyUI/.venv/lib/python3.12").replace("\\", "/")
    assert _driver_cmds(linux)[1] == ["CUDA_LAUNCH_BLOCKING=1 python main.py"]
    desktop = text.replace("D:\\Apps\\ComfyUI\\.venv", "C:\\Users\\u\\AppData\\Local\\Programs\\@comfyorgcomfyui-electron\\"
                                                       "resources\\ComfyUI\\.venv")
    g, cmds = _driver_cmds(desktop)
    assert cmds == [] and "ComfyUI Desktop has no setting for environment variables" in g["markdown"], g["markdown"]


# 5. A vLLM start-up failure shown side by side (modelled on vllm-project/vllm#4408: WizardLM-2-8x22B on one 80 GB A100
# at --gpu-memory-utilization 0.50, out of memory before any line shows the weights loaded): the top guide is a start-up
# one (vllm-weights), and the runner-up activations took "Out of memory while serving". guide_phase.py keeps the
# runner-up in the top guide's phase (guides' front matter `phase:`)
START = "vllm_4408_wizardlm_8x22b_a100_startup.log"


def test_a_start_up_failures_runner_up_guide_is_a_start_up_one():
    """(fix67f, rev67a F5) only where the log shows the phase: here the loader's load_weights frame (the same failure with
    that frame, data/fix67f); the bare log keeps each cause's own guide (test_triage_fix67f)."""
    from gpu_garden.memory.triage import guide_phase, render
    res, ev = _answer((DATA.parent / "fix67f" / "vllm_4408_wizardlm_load_weights_frame.log").read_text())
    top, second = ev["alternatives"][:2]
    assert (top["id"], second["id"]) == ("weights-exceed-vram", "activations"), ev["alternatives"]
    assert guide_phase.phase(top["guide"]["id"]) == "startup"
    assert second["guide"]["id"] != "vllm-activations", second      # was vllm-activations, "... while serving"
    assert guide_phase.phase(second["guide"]["id"]) == "startup", second
    assert "while serving" not in render.render_human(res)
    assert "The guide below is for weights-exceed-vram and activations both." in render.render_human(res)


def test_phases_are_tagged_and_a_runner_up_without_one_in_that_phase_keeps_its_guide():
    from gpu_garden.memory.triage import guide_phase, guides
    tagged = {g["id"]: g["phase"] for g in guides.load_all().values() if g.get("phase")}
    assert tagged["vllm-activations"] == "serving" and set(tagged.values()) == {"startup", "serving"}, tagged
    assert all(i.startswith("vllm-") for i in tagged), tagged
    env = {"runtime": "vllm", "os": "linux", "backend": "cuda", "allocator": "native", "expandable_segments": True}
    # a serving failure's runner-up weights-exceed-vram has no serving guide: vllm-weights stays
    assert guide_phase.runner_up("weights-exceed-vram", "vllm", env, {}, "torch.cuda", None, "vllm-activations")["id"] == \
        "vllm-weights"
    # no phase on the top guide (a generic one): guides.select's choice, as before
    assert guide_phase.runner_up("activations", "vllm", env, {}, "torch.cuda", None, "allocation-refused")["id"] == \
        "vllm-activations"
