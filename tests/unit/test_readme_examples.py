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


# README excerpts of a command's output (a ```text block after the sentence that names the command): every line shown,
# "..." aside, is a line the command prints today, in the order it prints them. The demo's estimate is on embedded
# file headers and the triage on a bundled log, so neither depends on this machine.
EXCERPTS = {
    "The estimate part of `gpu-garden demo`": ["demo"],
    "`memory/triage/samples/comfyui_vae_decode_oom.log` it prints": ["triage", "memory/triage/samples/comfyui_vae_decode_oom.log"],
}


def _excerpt(text, intro):
    start = text.index(intro)
    block = text.index("```text\n", start) + len("```text\n")
    return text[block:text.index("```\n", block)]


@pytest.mark.parametrize("intro", sorted(EXCERPTS))
def test_readme_output_excerpt_is_current(intro, monkeypatch):
    monkeypatch.chdir(REPO)
    shown = [line.rstrip() for line in _excerpt((REPO / "README.md").read_text(encoding="utf-8"), intro).splitlines()]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(EXCERPTS[intro])
    printed = iter(line.rstrip() for line in out.getvalue().splitlines())
    for line in shown:
        if line in ("...", ""):
            continue
        assert any(p == line for p in printed), f"README shows a line the command does not print (in this order): {line!r}"
