"""ui49: the flight recorder's timeline drew its memory axis from zero, so a CPU run, whose every node peaks at the
process's RSS (4.6 to 4.8 GiB), drew one solid block. The axis (web/lib/timeline_axis.js, run in node) starts at a
round figure below the lowest peak when every peak sits in the top half and they differ, and says where it starts;
it spans at least a quarter of the highest peak and leaves the lowest bar a fifth of the height, so nearly equal peaks
are not drawn as a sliver and a full bar (ux20b's 1.70 and 1.72 GiB). Expected floors worked by hand below."""
import pytest

from support import node_js

MiB, GiB = 1 << 20, 1 << 30


def axis(*peaks):
    return node_js.call("lib/timeline_axis.js", "memoryAxis", list(peaks))


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
