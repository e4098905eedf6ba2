"""Task tri66: comfy-aimdo's host buffer failing where aimdo's own log names the file read as what failed
(predicates.aimdo_file_read, rules_other.py). hostbuf_read_file_slice reads a weights file into a buffer that
hostbuf_extend already committed and registered (comfy-aimdo src/hostbuf.c), so "file read failed" is the read's I/O
(ReadFile / GetOverlappedResult on Windows, src-win/xfer-file-plat.c), not an allocation of RAM or pinned memory. Lines
made up in aimdo's and comfy_aimdo's layout (file, line number, level, function), not taken from a corpus file."""
import pytest

from gpu_garden.memory.triage import engine

PY = "RuntimeError: HostBuffer.read_file_slice failed\n"
HEAD = "Total VRAM 12282 MB, total RAM 32607 MB\nRequested to load WAN21\n"


def _read(text):
    res = engine.triage_text(text)
    ev = res["events"][res.get("headline", -1)]
    return res["cause"], ev["kind"]


@pytest.mark.parametrize("aimdo", [
    "aimdo: src/hostbuf.c:262:ERROR:hostbuf_read_file_slice: file read failed\n",
    "aimdo: src-win/xfer-file-plat.c:51:ERROR:xfer_file_read_at: ReadFile failed error=23\n"
    "aimdo: src/hostbuf.c:262:ERROR:hostbuf_read_file_slice: file read failed\n",
    "aimdo: src-win/xfer-file-plat.c:51:ERROR:xfer_file_read_at: GetOverlappedResult failed error=1450\n",
])
def test_the_file_read_named_as_what_failed_is_no_shortage(aimdo):
    # host-ram before the row (rules_host's pinned-host row read the Python line alone)
    assert _read(HEAD + aimdo + PY) == ("other", "comfy.pinned_host")


def test_the_python_line_alone_and_the_copy_stay_pinned_host_memory():
    # nothing says the read failed: the buffer or its copy may be what ran short (round 30's reading, unchanged)
    assert _read(HEAD + PY) == ("host-ram", "comfy.pinned_host")
    copy = "aimdo: src/hostbuf.c:283:ERROR:hostbuf_read_file_slice: device copy failed result=2\n"
    assert _read(HEAD + copy + PY)[0] == "host-ram"


def test_other_programs_read_failures_are_not_aimdo():
    # a file read failing in another program's words does not move aimdo's pinned-host reading
    assert _read(HEAD + "tar: archive.bin: file read failed\nxfer_file: done\n" + PY)[0] == "host-ram"
