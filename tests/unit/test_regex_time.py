"""The linear-time guard itself (support/regex_time.py): it must still fail on a backtracking blow-up once scaled to a
slow machine, and a slow machine must not loosen it without limit."""
import re

import pytest

import support.regex_time as rt
from support.regex_time import MAX_FACTOR, REF_S, assert_each_fast, machine_factor


def test_machine_factor_is_within_its_bounds():
    assert 1.0 <= machine_factor() <= MAX_FACTOR


@pytest.mark.parametrize("reference, factor", [(REF_S / 2, 1.0), (REF_S * 3, 3.0), (REF_S * 1000, MAX_FACTOR)])
def test_machine_factor_scales_then_stops(monkeypatch, reference, factor):
    # faster than the tuning machine: no tightening; 3x slower: 3x; a thousand times slower: the cap, 10
    monkeypatch.setattr(rt, "reference_s", lambda: reference)
    assert rt.machine_factor() == pytest.approx(factor)


def test_guard_fails_on_a_blow_up_and_says_by_how_much():
    # (a+)+b on 22 a's and no b: 2^22 ways to split, 0.25 s of user CPU on the tuning machine (4x REF_S), 18x the bound
    blow_up = re.compile(r"(a+)+b").search
    with pytest.raises(AssertionError, match=r"text 0 \(22 chars\) took \d+\.\d\d s of user CPU, bound"):
        assert_each_fast([(blow_up, ["a" * 22])], limit=REF_S / 4)


def test_guard_passes_a_linear_search():
    assert_each_fast([(re.compile(r"a+b").search, ["a" * 22])], limit=REF_S / 4)
