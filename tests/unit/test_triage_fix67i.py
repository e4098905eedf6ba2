"""Review rev67d's findings on fix67c mended in fix67i (issue 14), each through the whole scan on a log from
tests/unit/data/fix67i (threads in its README), expected values read from the log by hand.

F1 ComfyUI's report Devices section and start-up figures are the main device's: none for a failure on another card
   (torch's "GPU 1", or a model loaded on cuda:1), and "free now" never above the card's total.
F2 The start-up figures are the failing session's (the last "Total VRAM" line before the failure), not the log's last.
F3 SD1ClipModel / SD2ClipModel (CLIP only in ComfyUI) get the CLIP advice, worded for any CLIP-only model, not T5's.
F5 Only the wrapper's T5 text-encoder nodes (an exact table) get its T5 loader's widgets, not its CLIP-vision loader.
F4 comfy-aimdo's abort reading needs an interrupt after the last "got prompt" before the failure (by line), and reads
   timestamp-prefixed lines (ComfyUI-Manager's "[...] ", ISO "... - ").
F6-F8 UTF-16 without a BOM is told by a trial decode: heads of box lines, a tqdm bar, Chinese lines read as text;
   16-bit binaries (.npy, .pgm) stay "not a text log"; a UTF-32 BOM is read as UTF-32."""
import json
from pathlib import Path
from types import SimpleNamespace

from gpu_garden.memory.triage import engine

DATA = Path(__file__).parent / "data" / "fix67i"
MiB = 1 << 20


def _cli(path, capsys, as_json=True):
    rc = engine.run_cli(SimpleNamespace(file=str(path), json=as_json))
    return rc, capsys.readouterr().out


def _res(path, capsys):
    rc, out = _cli(path, capsys)
    return json.loads(out)


def _variant(tmp_path, name, old, new):
    text = (DATA / name).read_text()
    assert old in text, old
    p = tmp_path / name
    p.write_text(text.replace(old, new))
    return p


# --- F1: the figures of the card that failed ---------------------------------------------------------------------------

def test_gpu1_failure_gets_no_cuda0_free_now(capsys):
    nums = _res(DATA / "multigpu_report_gpu1_msg.log", capsys)["events"][-1]["numbers"]
    assert nums["total"] == 8 << 30                  # the message's GPU 1: "total capacity of 8.00 GiB"
    assert "free_current" not in nums, nums          # the report's VRAM Free 24436015104 is cuda:0's


def test_load_on_cuda1_gets_no_cuda0_figures(capsys):
    # no GPU named by the message, but the text encoder loads on cuda:1: neither cuda:0's total nor its free
    nums = _res(DATA / "multigpu_report_cuda1.log", capsys)["events"][-1]["numbers"]
    assert "total" not in nums and "free_current" not in nums, nums


def test_same_card_keeps_report_figures(tmp_path, capsys):
    # the same log with the encoder on cuda:0: the report's figures are the failing card's
    p = _variant(tmp_path, "multigpu_report_cuda1.log", "model load device: cuda:1", "model load device: cuda:0")
    nums = _res(p, capsys)["events"][-1]["numbers"]
    assert nums["total"] == 25769279488 and nums["free_current"] == 24436015104, nums


def test_free_now_never_above_total(tmp_path, capsys):
    # torch names GPU 0 (the report's card) with 8 GiB; the report's free 24436015104 cannot be that card's
    p = _variant(tmp_path, "multigpu_report_gpu1_msg.log", "model load device: cuda:1", "model load device: cuda:0")
    p.write_text(p.read_text().replace("GPU 1 has", "GPU 0 has"))
    nums = _res(p, capsys)["events"][-1]["numbers"]
    assert nums["total"] == 8 << 30 and "free_current" not in nums, nums


# --- F2: the start-up figures of the failing session ----------------------------------------------------------------

def test_failure_before_restart_gets_its_own_session_total(capsys):
    # session 1: "Total VRAM 24576 MB" (RTX 3090), fails; session 2 "Total VRAM 8188 MB" on cuda:1 is a later start
    nums = _res(DATA / "restart_other_card.log", capsys)["events"][-1]["numbers"]
    assert nums["total"] == 24576 * MiB, nums


def test_failure_after_restart_gets_the_new_session_total(tmp_path, capsys):
    # the same failure again in session 2: its own start-up line, 8188 MB; session 1's failure keeps 24576 MB
    lines = (DATA / "restart_other_card.log").read_text().splitlines(keepends=True)
    p = tmp_path / "two_sessions.log"
    p.write_text("".join(lines + lines[4:17]))
    events = _res(p, capsys)["events"]
    assert [e["numbers"].get("total") for e in events] == [24576 * MiB, 8188 * MiB], events


# --- F3: SD1.x / SD2.x encoders are CLIP only ---------------------------------------------------------------------------

def _md(path, capsys):
    return _res(path, capsys)["events"][-1]["guide"]["markdown"]


def test_sd15_gets_clip_advice_not_t5(capsys):
    md = _md(DATA / "sd15_trace_cliptextencode.log", capsys)      # "Requested to load SD1ClipModel"
    assert "t5xxl_fp8_e4m3fn_scaled" not in md and "umt5" not in md.lower(), md
    assert "CLIP only" in md and "SD1.x's CLIP-L" in md and "`stable_diffusion`" in md, md
    assert "even SDXL's" not in md, md                            # the wording is not SDXL's alone


def test_sd2_gets_clip_advice_not_t5(tmp_path, capsys):
    p = _variant(tmp_path, "sd15_trace_cliptextencode.log", "Requested to load SD1ClipModel", "Requested to load SD2ClipModel")
    md = _md(p, capsys)
    assert "t5xxl_fp8_e4m3fn_scaled" not in md and "CLIP only" in md, md


def test_sdxl_keeps_its_clip_advice(capsys):
    md = _md(DATA / "sdxl_trace_cliptextencode.log", capsys)
    assert "CLIP-L and CLIP-G" in md and "**DualCLIPLoader** (type `sdxl`)" in md and "t5xxl" not in md, md


# --- F5: the wrapper's T5 nodes, not every WanVideo* node --------------------------------------------------------------

WRAPPER_T5_ADVICE = "`quantization` to `fp8_e4m3fn`"


def test_wrapper_clip_vision_loader_gets_no_t5_widgets(capsys):
    md = _md(DATA / "wan_clipvision_loader_report.log", capsys)     # Node Type: LoadWanVideoClipTextEncoder
    assert WRAPPER_T5_ADVICE not in md and "LoadWanVideoT5TextEncoder" not in md, md


def test_wrapper_t5_nodes_get_its_widgets(tmp_path, capsys):
    for node in ("WanVideoTextEncode", "WanVideoTextEncodeSingle", "WanVideoTextEncodeCached", "LoadWanVideoT5TextEncoder"):
        p = _variant(tmp_path, "wan_clipvision_loader_report.log", "LoadWanVideoClipTextEncoder", node)
        assert WRAPPER_T5_ADVICE in _md(p, capsys), node


# --- F4: the failing prompt's interrupt ---------------------------------------------------------------------------------

AIMDO_FIRST = "Fix 1 - update comfy-aimdo"


def _fix1(path, capsys):
    fixes = _res(path, capsys)["events"][-1]["guide"]["fixes"]
    return fixes[0]["label"]


def test_aimdo_interrupt_in_failing_prompt_despite_a_later_one(capsys):
    assert _fix1(DATA / "aimdo_same_prompt_then_later_interrupt.log", capsys) == AIMDO_FIRST


def test_aimdo_interrupt_of_an_earlier_prompt_is_not_this_one(capsys):
    assert _fix1(DATA / "aimdo_interrupt_earlier_prompt.log", capsys) != AIMDO_FIRST
    assert _fix1(DATA / "aimdo_interrupt_after.log", capsys) != AIMDO_FIRST       # only a later prompt's


def test_aimdo_timestamped_interrupt_lines(capsys):
    for name in ("aimdo_manager_ts.log", "aimdo_iso_ts.log"):
        assert _fix1(DATA / name, capsys) == AIMDO_FIRST, name


def test_aimdo_interrupt_read_back_from_the_window(tmp_path, capsys):
    # past the scanner's 512 KiB head the lines before the failure are read back from its window: same readings
    pad = "".join(f"step {i}: nothing to report here, carry on\n" for i in range(16000))
    for name, hit in (("aimdo_same_prompt_then_later_interrupt.log", True), ("aimdo_interrupt_earlier_prompt.log", False)):
        p = tmp_path / name
        p.write_text(pad + (DATA / name).read_text())
        assert (_fix1(p, capsys) == AIMDO_FIRST) is hit, name


# --- F6-F8: UTF-16 / UTF-32 sniffing -------------------------------------------------------------------------------

def _kv_read(res, name):
    assert res["found"] is True and not res.get("not_text") and res["cause"] == "kv-cache", (name, res.get("cause"))
    nums = res["events"][-1]["numbers"]
    assert nums["max_model_len_tokens"] == 29000 and nums["kv_max_tokens"] == 23648, name     # vllm#10517's figures


def test_utf16_heads_not_ascii_heavy_read_as_text(capsys):
    for name in ("u16_richbox.log", "u16_tqdm.log", "u16_cjk.log", "u16_asciiart.log", "u16_vllmlogo.log"):
        _kv_read(_res(DATA / name, capsys), name)


def test_utf16be_cjk_head_read_as_text(tmp_path, capsys):
    p = tmp_path / "cjk_be.log"
    p.write_bytes((DATA / "u16_cjk.log").read_bytes().decode("utf-16-le").encode("utf-16-be"))
    _kv_read(_res(p, capsys), "cjk_be")


def test_16bit_binaries_stay_not_text(capsys):
    for name in ("labels_u16.npy", "img16.pgm"):
        res = _res(DATA / name, capsys)
        assert res["found"] is False and res.get("not_text") is True, (name, res)


def test_utf32_with_bom_read_as_utf32(tmp_path, capsys):
    _kv_read(_res(DATA / "u32le_bom.log", capsys), "u32le_bom")
    p = tmp_path / "u32be.log"
    p.write_bytes(b"\x00\x00\xfe\xff" + (DATA / "u32le_bom.log").read_bytes().decode("utf-32").encode("utf-32-be"))
    _kv_read(_res(p, capsys), "u32be_bom")
