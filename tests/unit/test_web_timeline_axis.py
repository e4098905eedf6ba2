"""ui49: the flight recorder's timeline drew its memory axis from zero, so a CPU run, whose every node peaks at the
process's RSS (4.6 to 4.8 GiB), drew one solid block. The axis (web/lib/timeline_axis.js, run in node) starts at a
round figure below the lowest peak when every peak sits in the top half and they differ, and says where it starts;
it spans at least a quarter of the highest peak and leaves the lowest bar a fifth of the height, so nearly equal peaks
are not drawn as a sliver and a full bar (ux20b's 1.70 and 1.72 GiB). Expected floors worked by hand below."""
import pytest

from support import node_js

MiB, GiB = 1 << 20, 1 << 30


def axis(*peaks, line=()):
    return node_js.call("lib/timeline_axis.js", "memoryAxis", list(peaks), list(line))


def share(v, ax):
    return node_js.call("lib/timeline_axis.js", "axisShare", v, ax)


def test_a_flat_cpu_run_starts_below_its_lowest_peak_and_says_so():
    # top 4.8 GiB: no lower than 4.8 x 0.75 = 3.6, and 4.6 - 0.25 x 0.2 = 4.55: 3.6; a step of 0.2 GiB (a quarter of
    # the 1.2 GiB span is 0.3) keeps it at 3.6 GiB
    ax = axis(int(4.6 * GiB), int(4.8 * GiB))
    assert ax["floor"] == pytest.approx(3.6 * GiB, abs=1) and ax["top"] == int(4.8 * GiB)
    assert ax["label"] == "memory 3.6 GiB → 4.8 GiB (not from 0)"
    # the lower bar is (4.6 - 3.6) / (4.8 - 3.6) = 0.83 of the height: the block shows its step
    assert share(int(4.6 * GiB), ax) == pytest.approx(1.0 / 1.2, abs=1e-3)


def test_nearly_equal_peaks_are_not_a_sliver_and_a_full_bar():
    # ux20b: 1.70 and 1.72 GiB. The floor is at most 1.72 x 0.75 = 1.29, rounded down to a 0.1 step: 1.2 GiB; the lower
    # bar is (1.70 - 1.2) / (1.72 - 1.2) = 0.96 of the height, not a sliver
    ax = axis(int(1.70 * GiB), int(1.72 * GiB))
    assert ax["floor"] == pytest.approx(1.2 * GiB, abs=1)
    assert share(int(1.70 * GiB), ax) == pytest.approx(0.5 / 0.52, abs=2e-3)


def test_from_zero_when_a_peak_is_low_or_all_are_equal():
    assert axis(int(1.2 * GiB), int(6.2 * GiB)) == {"floor": 0, "top": int(6.2 * GiB), "label": "memory 0 → 6.2 GiB"}
    assert axis(int(4.8 * GiB), int(4.8 * GiB))["floor"] == 0  # nothing varies: the bars stay whole
    assert axis(2000, 1000)["floor"] == 0  # under 1 MiB: no round unit to start at
    assert axis()["label"] == "memory 0 → 1 B" and axis(None, 5 * MiB)["floor"] == 0


def test_the_floor_prints_exactly_in_mib_too():
    # 300 and 310 MiB: no lower than 232.5 MiB; a quarter of the 77.5 MiB span is 19.4, a step of 10 MiB: 230.0 MiB
    ax = axis(300 * MiB, 310 * MiB)
    assert ax["floor"] == 230 * MiB and ax["label"] == "memory 230.0 MiB → 310.0 MiB (not from 0)"


def test_both_ends_of_a_cut_axis_are_in_one_unit():
    # rev24 D4: 0.9 and 1.0 GiB: no lower than 0.75 GiB (0.9 - 0.25 x 0.1 = 0.875 is higher); a quarter of the 0.25 GiB
    # span is 0.0625, a step of 0.05 rounds to one tenth: 0.7 GiB, printed in GiB as the top is (was "716.8 MiB")
    ax = axis(int(0.9 * GiB), GiB)
    assert ax["floor"] == pytest.approx(0.7 * GiB, abs=1)
    assert ax["label"] == "memory 0.7 GiB → 1.0 GiB (not from 0)"


def test_peaks_within_half_a_per_cent_are_drawn_from_zero():
    # rev24 D4: one byte apart drew "3.6 GiB → 4.8 GiB (not from 0)" for two bars of equal height
    assert axis(int(4.8 * GiB), int(4.8 * GiB) + 1) == {"floor": 0, "top": int(4.8 * GiB) + 1, "label": "memory 0 → 4.8 GiB"}
    # 0.4 % apart (under NEAR, 0.5 %): from 0; 0.6 % apart: cut at 3.6 GiB as the 4.6 / 4.8 GiB run
    assert axis(int(4.8 * GiB * 0.996), int(4.8 * GiB))["floor"] == 0
    assert axis(int(4.8 * GiB * 0.994), int(4.8 * GiB))["floor"] == pytest.approx(3.6 * GiB, abs=1)


def test_the_axis_spans_the_used_memory_line_too():
    # rev24 D3: the used-memory line is drawn on the same axis; a point of it at 3.0 GiB under peaks of 4.6 and 4.8 GiB
    # was drawn on the base line of an axis cut at 3.6 GiB. With it: lowest 3.0, no lower than 3.0 - 0.25 x 1.8 = 2.55;
    # a quarter of the 2.25 GiB span is 0.5625, a step of 0.5 GiB: 2.5 GiB, and the point is 0.5 / 2.3 of the height
    ax = axis(int(4.6 * GiB), int(4.8 * GiB), line=[3 * GiB, int(4.7 * GiB)])
    assert ax["floor"] == pytest.approx(2.5 * GiB, abs=1) and ax["label"] == "memory 2.5 GiB → 4.8 GiB (not from 0)"
    assert share(3 * GiB, ax) == pytest.approx(0.5 / 2.3, abs=1e-3)
    # a point at 1 GiB: the lowest sits under half the top, so from 0; a line above the peaks raises the top
    assert axis(int(4.6 * GiB), int(4.8 * GiB), line=[GiB])["floor"] == 0
    assert axis(int(4.6 * GiB), int(4.8 * GiB), line=[5 * GiB])["top"] == 5 * GiB
