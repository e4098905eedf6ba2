"""ui48's walk: one OOM panel wrote the same figure twice, "312.00 MiB free of 8.00 GiB" (triage's evidence,
memory/units.py fmt_bytes) and "Free 312 MiB" (the legend, web/lib/format.js fmtBytes, which rounded MiB and KiB to
whole numbers). fmtBytes now keeps `digits` in every unit, so with 2 it writes what fmt_bytes writes (run in node)."""
import pytest

from gpu_garden.memory.units import fmt_bytes
from support import node_js

MiB, GiB = 1 << 20, 1 << 30
# (bytes, what both formatters write with two digits)
CASES = [(312 * MiB, "312.00 MiB"), (int(4.28 * MiB), "4.28 MiB"), (8 * GiB, "8.00 GiB"), (int(1.5 * GiB), "1.50 GiB"),
         (5 * 1024 + 512, "5.50 KiB"), (12, "12 B")]


@pytest.mark.parametrize("n,text", CASES)
def test_the_page_and_the_server_write_a_figure_alike(n, text):
    assert node_js.call("lib/format.js", "fmtBytes", n, 2) == text
    assert fmt_bytes(n) == text


def test_one_digit_keeps_the_unit_and_its_digit():
    assert node_js.call("lib/format.js", "fmtBytes", 192 * MiB) == "192.0 MiB"
    assert node_js.call("lib/format.js", "fmtBytes", int(4.7 * GiB)) == "4.7 GiB"
    assert node_js.call("lib/format.js", "fmtBytes", None) == "—"
