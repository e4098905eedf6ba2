"""Fills the README's figures from benchmarks/results/*.json.

A figure in README.md is written as `<!--fig FILE KEY FORMAT-->VALUE<!--/fig-->`: FILE is a results file name
(without .json), KEY a dotted path into it, FORMAT a Python format spec (`.1f`, `,d`, `.0%`; `-` for str;
`GiB`/`MiB` for a byte count shown in those units with two decimals; `len` for how many items a list holds).
The block between `<!--figures-->` and `<!--/figures-->` becomes a table of every figure with the command that
prints it. `python scripts/readme_figures.py` rewrites the README; `--check` exits 1 when it is stale.
"""
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
RESULTS = REPO / "benchmarks" / "results"
FIG = re.compile(r"<!--fig (\S+) (\S+) (\S+?)-->(.*?)<!--/fig-->", re.S)
TABLE = re.compile(r"(<!--figures-->\n).*?(<!--/figures-->)", re.S)


def lookup(file: str, key: str):
    path = RESULTS / f"{file}.json"
    if not path.is_file():
        raise KeyError(f"{path.relative_to(REPO)} is missing (run its benchmark)")
    node = data = json.loads(path.read_text())
    for part in key.split("."):
        if isinstance(node, list):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(f"{file}.json has no {key!r}")
    return node, data.get("command", "?")


UNITS = {"GiB": 2**30, "MiB": 2**20}


def fmt(value, spec: str) -> str:
    if spec in UNITS:
        return f"{value / UNITS[spec]:.2f} {spec}"
    if spec == "len":                      # a list in the results file (e.g. the rows of a set): how many
        return str(len(value))
    return str(value) if spec == "-" else format(value, spec)


def render(text: str) -> str:
    rows = []

    def fill(m):
        file, key, spec = m.group(1), m.group(2), m.group(3)
        value, command = lookup(file, key)
        shown = fmt(value, spec)
        rows.append((file, key, shown, command))
        return f"<!--fig {file} {key} {spec}-->{shown}<!--/fig-->"

    text = FIG.sub(fill, text)
    seen, lines = set(), ["| figure | value | printed by |", "|---|---|---|"]
    for file, key, shown, command in rows:
        if (file, key) not in seen:
            seen.add((file, key))
            lines.append(f"| `{file}: {key}` | {shown} | `{command}` |")
    return TABLE.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), text)


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="Fill README.md's figures from benchmarks/results/*.json (rewrites README.md).")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when README.md's figures are stale")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    old = README.read_text(encoding="utf-8")
    new = render(old)
    if args.check:
        if new != old:
            print("README.md figures are stale: run python scripts/readme_figures.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
