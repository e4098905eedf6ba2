"""README (and docs/*.md) examples that show a command's output (a code block starting `$ gpu-garden kv ...`) are what the
command prints today: the example is run and compared line by line."""
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from gpu_garden.memory import cli

REPO = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```\n\$ (gpu-garden kv [^\n]*)\n(.*?)```", re.S)
PAGES = [REPO / "README.md"] + sorted((REPO / "docs").glob("*.md"))
EXAMPLES = [ex for p in PAGES for ex in BLOCK.findall(p.read_text(encoding="utf-8"))]


def test_the_readme_shows_an_example():
    assert EXAMPLES


@pytest.mark.parametrize("command,shown", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_example_output_is_current(command, shown):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(shlex.split(command)[1:])
    strip = lambda s: [line.rstrip() for line in s.strip().splitlines()]
    assert strip(out.getvalue()) == strip(shown)
