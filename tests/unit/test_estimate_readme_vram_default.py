"""README's `gpu-garden estimate` section says what `--vram` defaults to as the CLI's help does (ux50 S1: README said
"figured on the smallest common card", the help "this machine's first device")."""
import re
from pathlib import Path

from gpu_garden.memory import cli

REPO = Path(__file__).resolve().parents[2]


def _help_default(parser, command, option):
    sub = next(a for a in parser._actions if getattr(a, "choices", None) and command in a.choices).choices[command]
    text = next(a.help for a in sub._actions if option in a.option_strings)
    return re.search(r"default: ([^)]*)", text).group(1)


def test_readme_states_the_help_default_of_estimate_vram():
    default = _help_default(cli.build_parser(), "estimate", "--vram")
    assert default == "this machine's first device"  # the help's words, read from the parser
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### `gpu-garden estimate`"):readme.index("**Three peaks.**")]
    said = " ".join(re.search(r"Without `--vram`(.*?)\.", section, re.S).group(1).split())
    assert default in said, said
