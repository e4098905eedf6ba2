"""Session 18 (regA): `other` read from what the log itself shows, each beside the same log without that evidence; and a
traceback frame read whole after a paste was wrapped and joined again."""
from gpu_garden.memory.triage import lines, window


def test_a_frame_line_joined_without_its_blank_still_reads_as_a_frame():
    # a paste wrapped before "line" (or before its number) and joined again as a terminal's cut loses that blank
    for text in ('  File "C:\\apps\\gen\\torch\\cuda\\memory.py",line 222, in empty_cache',
                 '  File "C:\\apps\\gen\\mmgp\\offload.py", line2070, in unload_all'):
        m = lines.FRAME_RE.search(text)
        assert m and m.group(2) in ("empty_cache", "unload_all"), text
        assert window._FRAME_RE.search(text.encode()).group(2).decode() == m.group(2)
    assert lines.FRAME_RE.search('  File "/srv/app/run.py", line 12, in main').group(2) == "main"
