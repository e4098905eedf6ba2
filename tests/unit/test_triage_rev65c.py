"""Review rev65c of task tri82 (issue 14): a native abort in a later ComfyUI prompt or process than an earlier caught
failure heads the answer (#3), and the abort line is read under a launcher's prefix (#4). Inputs written by hand (the
reviewer's reproductions, /tmp/rev65c/test_rev65c_tri82*.py)."""
import pytest

from test_triage_tri82 import ABORT, COMFY_MM, COMFY_START, TORCH_OOM

CAUGHT = ("!!! Exception during processing !!! " + TORCH_OOM.split("torch.", 1)[1]
          + "Got an OOM, unloading all loaded models.\nPrompt executed in 3.21 seconds\n")


def _triage(text):
    from gpu_garden.memory.triage import engine
    return engine.triage_text(text)


def test_an_abort_after_a_restart_heads_the_answer():
    # run 1: an OOM ComfyUI caught; ComfyUI restarted (its start-up lines: a new process); run 2 aborts natively
    r = _triage(COMFY_START + CAUGHT + "\n" + COMFY_START + COMFY_MM + ABORT)
    assert r["cause"] == "other" and r["events"][r["headline"]]["kind"] == "python.native_abort"


def test_an_abort_in_a_later_prompt_heads_the_answer():
    # prompt 1's OOM caught, prompt 2 finished, prompt 3 aborts: the abort did not end the OOM's failure
    r = _triage(COMFY_START + CAUGHT + "got prompt\nRequested to load SDXL\nPrompt executed in 9.80 seconds\ngot prompt\n"
                + COMFY_MM + ABORT)
    assert r["cause"] == "other" and r["events"][r["headline"]]["kind"] == "python.native_abort"


def test_an_abort_in_the_same_prompt_as_the_oom_still_trails_it():
    # no prompt end and no restart between them: the abort is how the OOM's failure ended (tri82's reading kept)
    r = _triage(COMFY_START + "!!! Exception during processing !!! " + TORCH_OOM.split("torch.", 1)[1] + ABORT)
    assert r["cause"] != "other"


@pytest.mark.parametrize("prefix", ["comfyui-1  | ", "Jan 05 10:11:12 box python3[2211]: ",
                                    "[2025-01-05 10:11:12.345] "])
def test_the_abort_is_read_under_a_launchers_prefix(prefix):
    text = "".join(prefix + line + "\n" for line in (COMFY_START + COMFY_MM + ABORT).splitlines())
    assert _triage(text)["cause"] == "other"
