"""fix67o: mend the second review round's triage findings (rev67i, rev67j; issue 14). Logs under data/fix67o/ (README:
each one's thread), numbers exact, prose and paths rewritten. Every test goes through the whole scan (engine.triage_text,
the CLI's path, or Scan.feed_text where a fact is checked)."""
from pathlib import Path

from gpu_garden.memory.triage import engine
from support import triage_event
from gpu_garden.memory.triage.scan import Scan

DATA = Path(__file__).parent / "data" / "fix67o"
FP8_TAIL = (Path(__file__).parent / "data" / "fix67f" / "vllm_31273_fp8_load_oom_tail.log").read_text()


def _answer(name_or_text):
    return triage_event.answer(DATA, name_or_text)


def _facts(text):
    s = Scan()
    s.feed_text(text)
    return s.facts


# 1 (rev67i #2). fix67m looked for a docker run's image at most 300 characters on, and a command's earlier `\` lines
# left the next only the last 320 characters back from the docker run: a run with many -v/--env lines lost its image, so
# its `-q fp8` was not vLLM's. Earlier lines now leave "docker run " and their tail, and a single line is read 4000 on.
def test_q_after_a_long_docker_run_is_read():
    res, ev, said = _answer("e_docker_long_q.log")
    f = _facts((DATA / "e_docker_long_q.log").read_text())
    assert f["vllm_wflags"].get("quant") == "fp8" and f.get("vllm_own_quant") == "fp8"
    assert res["cause"] == "other" and "should fit" in said, (res["cause"], said)


def test_q_after_a_docker_run_image_far_on_one_line():
    envs = " ".join(f"-e HF_HOME_{i}=/srv/models/huggingface/cache/{i}" for i in range(12))
    line = f"$ docker run --runtime nvidia --gpus all --ipc=host -p 8000:8000 {envs} vllm/vllm-openai:v0.8.5 " \
           f"--model Qwen/Qwen2.5-72B-Instruct -q fp8"
    assert len(line) > 400
    f = _facts(line + "\n" + FP8_TAIL)
    assert f["vllm_wflags"].get("quant") == "fp8" and f.get("vllm_own_quant") == "fp8"
    f = _facts(line.replace("vllm/vllm-openai", "nvidia/cuda") + "\n" + FP8_TAIL)     # not a vllm image: docker's quiet
    assert f["vllm_wflags"].get("quant") is None


# 2 (rev67j #2, regression of fix67h). Every "got prompt" took one of wrapper_runs' 64 kept entries, so 70 cached prompts
# (a prompt ComfyUI answers from its cache prints no wrapper line) pushed the runs' allocated figures out and the leak
# reading was lost. A "prompt" right after a "prompt" is not kept. The log: fix67b's c6_blockswap_lora_leak_growing.log
# (kijai/ComfyUI-WanVideoWrapper#983) with 70 cached prompts after its second run, as rev67j built it.
def test_cached_prompts_keep_the_wrapper_leak_reading():
    lines = (Path(__file__).parent / "data" / "fix67b" / "c6_blockswap_lora_leak_growing.log").read_text().splitlines(True)
    assert lines[40].startswith("got prompt")
    cached = "Prompt executed in 0.01 seconds\ngot prompt\n" * 70
    res, ev, said = _answer("".join(lines[:41]) + cached + "".join(lines[41:]))
    assert res["cause"] == "leak", (res["cause"], said)
    base, _, _ = _answer("".join(lines))        # the same log without them: the same reading
    assert base["cause"] == "leak"


# 3 (rev67j #1). comfy_devices.elsewhere() said the failure was on another card whenever a model loads on another card,
# even where torch's message names the main card: the report's free figure for cuda:0 was dropped. torch's GPU index
# now decides where the message has one. data/fix67o/mg_*: fix67i's multigpu_report_gpu1_msg.log with the message on
# GPU 0 (the CLIP on cuda:1, and the control with it on cuda:0); the report's VRAM Free is 1436015104.
def test_a_message_on_the_main_card_keeps_the_report_free_figure():
    for name in ("mg_fail_gpu0_clip_on_cuda1.log", "mg_ctrl_clip_on_cuda0.log"):
        res, ev, said = _answer(name)
        assert ev["numbers"].get("free_current") == 1436015104, (name, ev["numbers"])


# 4 (rev67j #3). fix67h read a "Segmentation fault" anywhere after BFC's tries as the run not going on; a crash after
# the run's step lines (the run went on with the smaller region) is not the tries'. data/fix67o/
# tf_backpedal_run_went_on_then_segfault.log: fix67h's f5 tries, then tensorflow/models#1156's step lines, then the crash.
def test_a_segfault_after_the_run_went_on_is_not_the_tries():
    text = (DATA / "tf_backpedal_run_went_on_then_segfault.log").read_text()
    res, ev, said = _answer(text)
    assert res["cause"] == "other", (res["cause"], said)
    lines = text.splitlines(True)          # the crash right after the tries (no step between) still counts
    res, ev, said = _answer("".join(lines[:3]) + "Segmentation fault\n" + "".join(lines[3:-1]))
    assert res["cause"] != "other", (res["cause"], said)


# 5 (rev67j #4). A UTF-16LE log with no BOM whose head is Chinese lines of 70 characters has 1.4 % NULs at the heavier
# parity, under fix67i's MIN_NUL 2 %: refused as "not a text log". MIN_NUL is 0.5 % now (fix67i's 16-bit binaries are
# still refused by the parity ratio and the strict decode: test_triage_fix67i). data/fix67o/u16le_nobom_cjk70.log: rev67j's
# made-up CJK head + data/fix67i's report tail, UTF-16LE without a BOM (the same bytes as its BOM form after the BOM).
def test_utf16le_without_bom_and_a_cjk_head_is_read(tmp_path, capsys):
    import json
    from types import SimpleNamespace
    raw = (DATA / "u16le_nobom_cjk70.log").read_bytes()
    assert not raw.startswith(b"\xff\xfe")
    bom = tmp_path / "bom.log"
    bom.write_bytes(b"\xff\xfe" + raw)
    out = []
    for p in (DATA / "u16le_nobom_cjk70.log", bom):
        engine.run_cli(SimpleNamespace(file=str(p), json=True))
        out.append(json.loads(capsys.readouterr().out))
    assert out[0]["found"] is True and not out[0].get("not_text"), out[0].get("not_text")
    assert out[0]["cause"] == out[1]["cause"] == "text-encoder", (out[0]["cause"], out[1]["cause"])


# 6 (rev67i #1). With two vLLM runs in one log, the first failing at vLLM's default utilization (no flag), the
# utilization and --max-model-len were read by vllm_setting without the run's bounds: the failing run got the second
# run's 0.85 ("--gpu-memory-utilization 0.84 ... the log's 0.85"). Now, with two or more `vllm serve` lines, a setting is
# read within the failing run (vllm_run.run_setting); a run that printed none gets None. data/fix67o/a_*.log: rev67i's
# two-run log (the first run alone: a0_control_one_run.log), vllm-project/vllm's capture OOM shape (threads in README).
def test_the_first_failing_run_keeps_its_own_settings():
    got = []
    for name in ("a_first_fails_default_util.log", "a0_control_one_run.log"):
        res, ev, said = _answer(name)
        n = ev["numbers"]
        got.append((res["cause"], n.get("gpu_memory_utilization_ratio"), n.get("max_model_len_tokens"),
                    [ln for ln in engine.render_human(res).splitlines() if ln.startswith("vllm serve")]))
    assert got[0] == got[1], got
    assert got[0][1] is None and got[0][2] == 124000, got[0]
    assert not any("0.84" in ln for ln in got[0][3]), got[0][3]
