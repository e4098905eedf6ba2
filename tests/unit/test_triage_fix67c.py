"""Audit aud67b's findings mended in fix67c (issue 14), each with a log from tests/unit/data/fix67c (threads in its
README) and expected values read from the log by hand.

#13 A UTF-16LE log without a byte-order mark (NULs at odd offsets) is read as UTF-16LE, BE likewise; a binary still
    errors."""
import json
from pathlib import Path
from types import SimpleNamespace

from gpu_garden.memory.triage import engine
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
