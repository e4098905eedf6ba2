"""fix67f: review rev67a's findings on the tri67 merge (issue 14). Logs under data/fix67f/, each modelled on the public
thread its test names (numbers exact, prose and paths rewritten). Every test goes through the whole scan
(engine.triage_text, the CLI's path)."""
from pathlib import Path

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
    res = engine.triage_text((DATA / "comfy_13210_tied_vote_driver.log").read_text(), context={"platform": "linux"})
    ev = res["events"][res["headline"]]
    assert [t for _, t in _blocks(ev) if "CUDA_LAUNCH" in t] == ["CUDA_LAUNCH_BLOCKING=1 python main.py"]  # the host: no tie
    assert env_mod  # imported for the flag's home


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
