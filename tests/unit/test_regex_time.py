"""The linear-time guard itself: it must still fail on a backtracking blow-up once scaled to a slow machine."""
import re

import pytest

from support.regex_time import REF_S, assert_each_fast, machine_factor


def test_machine_factor_is_at_least_one():
    assert machine_factor() >= 1.0


def test_guard_fails_on_a_blow_up():
    # (a+)+b on 22 a's and no b: 2^22 ways to split, 0.25 s on the tuning machine (10x REF_S), 40x the bound below
    blow_up = re.compile(r"(a+)+b").search
    with pytest.raises(AssertionError):
        assert_each_fast([(blow_up, ["a" * 22])], limit=REF_S / 4)


def test_guard_passes_a_linear_search():
    assert_each_fast([(re.compile(r"a+b").search, ["a" * 22])], limit=REF_S / 4)
