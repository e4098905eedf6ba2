"""(rev54) memory/term.py wraps prose at the terminal's width: a figure and its unit stay on one line ("22.45 GiB", not
"22.45" at a line's end and "GiB" starting the next, as estimate's host-RAM note read at 60 columns)."""
from gpu_garden.memory import term


def test_a_figure_keeps_its_unit_across_a_wrap():
    # "  - " + 50 letters + " 22.45" ends at column 60 exactly: the break fell between the figure and "GiB"
    # (fails on the old _fill: its first line ends "22.45")
    line = "  - " + "a" * 50 + " 22.45 GiB more, and a 5 % margin"
    out = term.wrap(line, 60).split("\n")
    assert out == ["  - " + "a" * 50, "    22.45 GiB more, and a 5 % margin"], out
    assert "\ue000" not in term.wrap(line, 60)


def test_lines_that_fit_and_commands_are_untouched():
    # a short note, and a command past the width, come back exactly (the held space is put back where no wrap happens)
    assert term.wrap("  - 9.26 GiB kept for reload", 60) == "  - 9.26 GiB kept for reload"
    cmd = "vllm serve MODEL --max-model-len 8192 --kv-cache-memory 4294967296 --gpu-memory-utilization 0.83"
    assert term.wrap(cmd, 60) == cmd
