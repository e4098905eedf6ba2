"""Audit aud67b's findings mended in fix67c (issue 14), each with a log from tests/unit/data/fix67c (threads in its
README) and expected values read from the log by hand.

#13 A UTF-16LE log without a byte-order mark (NULs at odd offsets) is read as UTF-16LE, BE likewise; a binary still
    errors.
#12 The panel names every cause from one table (web/lib/oom_parts.js CAUSES, checked against rule_row.CAUSES); `other`
    by the guide triage chose for it on this reading ("CUDA driver out of memory (no allocator numbers)"), not
    "Out of memory"."""
import json
from pathlib import Path
from types import SimpleNamespace

from support import node_js

from gpu_garden.memory.triage import engine, guides
from gpu_garden.memory.triage.rule_row import CAUSES
from gpu_garden.memory.triage.utf16_sniff import utf16_encoding

DATA = Path(__file__).parent / "data" / "fix67c"


def _cli(path, capsys, as_json=True):
    rc = engine.run_cli(SimpleNamespace(file=str(path), json=as_json))
    return rc, capsys.readouterr().out


# --- #13: UTF-16 without a BOM --------------------------------------------------------------------------------------

def test_utf16le_without_bom_is_read_as_text(capsys):
    rc, out = _cli(DATA / "rb_utf16le_nobom.log", capsys)
    res = json.loads(out)
    assert res["found"] is True and not res.get("not_text"), out
    nums = res["events"][-1]["numbers"]
    assert res["cause"] == "kv-cache", res["cause"]             # as its UTF-8 form reads (aud67b out/c3_maxseqlen_3090)
    assert nums["max_model_len_tokens"] == 29000 and nums["kv_max_tokens"] == 23648        # vllm#10517's figures


def test_utf16be_without_bom_is_read_as_text(tmp_path, capsys):
    text = (DATA / "rb_utf16le_nobom.log").read_bytes().decode("utf-16-le")
    p = tmp_path / "be.log"
    p.write_bytes(text.encode("utf-16-be"))
    rc, out = _cli(p, capsys)
    res = json.loads(out)
    assert res["found"] is True and res["cause"] == "kv-cache", out
    assert res["events"][-1]["numbers"]["max_model_len_tokens"] == 29000


def test_sniff_tells_utf16_from_binary():
    assert utf16_encoding("INFO loading model\n".encode("utf-16-le")) == "utf-16-le"
    assert utf16_encoding("INFO loading model\n".encode("utf-16-be")) == "utf-16-be"
    assert utf16_encoding("INFO x".encode("utf-16")) == "utf-16"              # BOM: the codec reads the order from it
    assert utf16_encoding(b"INFO loading model\n" * 4) is None               # UTF-8/ASCII: no NUL at all
    assert utf16_encoding(bytes(4096)) is None                              # zero-filled: NULs at both offsets
    elf = b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x03\x00>\x00\x01\x00\x00\x00`\x10\x00\x00" + bytes(40)
    assert utf16_encoding(elf) is None
    assert utf16_encoding("ab".encode("utf-16-le")) is None                  # too short to tell


def test_binary_still_errors(tmp_path, capsys):
    # an ELF-like head (NULs at both offsets) and random-ish bytes: still "not a text log"
    p = tmp_path / "prog.bin"
    p.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(56) + bytes(range(256)) * 16)
    rc, out = _cli(p, capsys)
    res = json.loads(out)
    assert rc == 1 and res.get("not_text") is True, out


# --- #12: the panel's label for every cause -------------------------------------------------------------------------

def test_every_cause_has_a_real_panel_label():
    # one table (web/lib/oom_parts.js CAUSES) for triage's whole vocabulary (rule_row.CAUSES): no raw id
    # ("graph-capture" had none) and no bare "Out of memory" (what `other` was called)
    labels = [node_js.call("lib/oom_parts.js", "causeName", cid, {}) for cid in CAUSES]
    for cid, label in zip(CAUSES, labels):
        assert label != cid and label.strip() != "Out of memory", (cid, label)
    assert len(set(labels)) == len(labels), labels


def test_other_is_named_by_its_guide_on_this_reading():
    # aud67b's real-browser report (out/web_uncertain.txt): host-ram 35 % beside other 25 %, other's guide cuda-driver-oom
    title = guides.load_all()["cuda-driver-oom"]["title"]
    assert title == "CUDA driver out of memory (no allocator numbers)"
    alts = [{"id": "host-ram", "confidence": 0.35, "guide": {"id": "comfyui-pinned-memory", "title": "Pinned RAM"}},
            {"id": "other", "confidence": 0.25, "guide": {"id": "cuda-driver-oom", "title": title}}]
    report = {"cause": "host-ram", "uncertain": True, "pair": False, "alternatives": alts, "causes": alts}
    assert node_js.call("lib/oom_parts.js", "causeName", "other", report, None, alts[1]["guide"]) == title
    line = node_js.call("lib/oom_parts.js", "causeLine", report)["label"]
    assert line == f"Out of memory, cause uncertain: System RAM ran out? ({title} also possible)", line
    # without a guide (a stored report, the folded list): the table's own words, still not "Out of memory"
    assert node_js.call("lib/oom_parts.js", "causeName", "other", {}) == "Another kind of out-of-memory error"


# --- #7: the text-encoder guide follows the node and model -----------------------------------------------------------

def _guide(name, context=None):
    res = engine.triage_text((DATA / name).read_text(encoding="utf-8"), context)
    g = res["events"][res["headline"]]["guide"]
    assert g["id"] == "comfyui-text-encoder", g["id"]
    return g["markdown"]


def test_wrapper_node_gets_the_wrappers_widgets():
    md = _guide("c2_report_wanvideotextencode.log")           # Node Type: WanVideoTextEncode
    # the wrapper's own widgets (ComfyUI-WanVideoWrapper nodes.py INPUT_TYPES), not ComfyUI's flag or Load CLIP's device
    for words in ("LoadWanVideoT5TextEncoder", "`quantization` to `fp8_e4m3fn`", "`load_device` to `offload_device`",
                  "**WanVideoTextEncode** set `device` to `cpu`", "`force_offload`"):
        assert words in md, words
    assert "```bash" not in md and "In **Load CLIP**" not in md, md


def test_wrapper_loader_from_the_panel_context():
    # the panel's context names the node (aud67b panel_probe: LoadWanVideoT5TextEncoder)
    res = engine.triage_text("!!! Exception during processing !!! Allocation on device\nTraceback (most recent call last):\n"
                             "torch.OutOfMemoryError: Allocation on device", {"node_type": "LoadWanVideoT5TextEncoder"})
    md = res["events"][res["headline"]]["guide"]["markdown"]
    assert "`quantization` to `fp8_e4m3fn`" in md and "--fp8_e4m3fn-text-enc\n" not in md, md


def test_sdxl_gets_clip_advice_not_t5():
    md = _guide("c2_report_sdxl_encode.log")                  # Node Type: CLIPTextEncodeSDXL
    assert "CLIP-L and CLIP-G" in md and "t5xxl" not in md and "umt5" not in md.lower(), md
    assert "--fp8_e4m3fn-text-enc" in md and "(type `sdxl`)" in md


def test_core_t5_encoders_keep_the_t5_advice():
    for name in ("c2_trace_wan_cliploader.log", "c2_report_cliptextencode.log"):   # core Wan UMT5; generic CLIPTextEncode
        md = _guide(name)
        assert "umt5_xxl_fp8_e4m3fn_scaled.safetensors" in md and "In **Load CLIP**" in md, name
        assert "LoadWanVideoT5TextEncoder" not in md and "CLIP-L and CLIP-G" not in md, name


# --- #10: aimdo's compile error from the abort after an interrupt ----------------------------------------------------

def _compiler_guide(text):
    res = engine.triage_text(text)
    ev = res["events"][res["headline"]]
    assert ev["guide"]["id"] == "comfyui-compiler", ev["guide"]["id"]
    return ev["guide"]


COMPILER_LOG = (DATA / "c8_compiler_error.log").read_text(encoding="utf-8")


def test_abort_after_interrupt_puts_the_aimdo_update_first():
    g = _compiler_guide(COMPILER_LOG)             # ComfyUI PR #16108: fixed in comfy-aimdo 0.5.2; the log has 0.5.1
    assert g["commands"][0]["text"] == "python -m pip install -U comfy-aimdo", g["commands"]
    assert "0.5.2" in g["markdown"] and "update the node that patches the model" not in g["markdown"]


def test_abort_after_interrupt_on_the_portable_build():
    text = COMPILER_LOG.replace("/home/u/venv/lib/python3.12/site-packages",
                                r"C:\ComfyUI_windows_portable\python_embeded\Lib\site-packages").replace(
                                "/home/u/ComfyUI", r"C:\ComfyUI_windows_portable\ComfyUI")
    g = _compiler_guide(text)
    assert g["commands"][0]["text"] == r".\python_embeded\python.exe -s -m pip install -U comfy-aimdo", g["commands"]


def test_compile_error_without_an_interrupt_keeps_the_node_advice():
    g = _compiler_guide(COMPILER_LOG.replace("Processing interrupted\n", ""))
    assert "update the node that patches the model" in g["markdown"] and "0.5.2" not in g["markdown"]


# --- #8: ComfyUI's own figures in the numbers ------------------------------------------------------------------------

MB = 1 << 20


def _numbers(name):
    res = engine.triage_text((DATA / name).read_text(encoding="utf-8"))
    return res["events"][res["headline"]]["numbers"]


def test_error_report_devices_give_total_and_free_now():
    # Comfy-Org/ComfyUI#7627's report: "VRAM Total: 12481724416", "VRAM Free: 11307319296" (bytes, as printed)
    n = _numbers("c2_report_cliptextencode.log")
    assert n["total"] == 12481724416 and n["free_current"] == 11307319296, n
    assert "free" not in n                 # written after the failure: not the free memory at the moment it failed
    n = _numbers("c2_report_tripleclip.log")                       # #6693's form: 8 GB laptop RTX 3070
    assert n["total"] == 8589410304 and n["free_current"] == 7452229632, n


def test_startup_lines_give_card_ram_and_pinned_cap():
    # ComfyUI#15255/#14250: "Total VRAM 32607 MB, total RAM 65274 MB", "Enabled pinned memory 38353.0" (MiB)
    n = _numbers("c8_hostbuffer_portable.log")
    assert (n["total"], n["host_total"], n["pinned_limit"]) == (32607 * MB, 65274 * MB, 38353 * MB), n
    n = _numbers("c8_pinned_gguf_bare.log")            # ComfyUI#10662: "Total VRAM 12282 MB, total RAM 32691 MB", 14710.0
    assert (n["total"], n["host_total"], n["pinned_limit"]) == (12282 * MB, 32691 * MB, 14710 * MB), n


def test_host_figures_only_for_a_host_ram_failure():
    n = _numbers("c8_compiler_error.log")              # "Total VRAM 24090 MB, total RAM 64203 MB"; cause other
    assert n["total"] == 24090 * MB and "host_total" not in n and "pinned_limit" not in n, n


def test_the_numbers_line_names_them():
    res = engine.triage_text((DATA / "c8_hostbuffer_portable.log").read_text(encoding="utf-8"))
    text = engine.render_human(res)
    assert "total 31.84 GiB, system RAM 63.74 GiB, pinned RAM limit 37.45 GiB" in " ".join(text.split()), text[:400]
