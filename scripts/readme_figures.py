"""Fills the README's figures (and those of docs/*.md) from benchmarks/results/*.json.

A figure in README.md or a docs/*.md page is written as `<!--fig FILE KEY FORMAT-->VALUE<!--/fig-->`: FILE is a results file name
(without .json), KEY a dotted path into it, FORMAT a Python format spec (`.1f`, `,d`, `.0%`; `-` for str;
`GiB`/`MiB` for a byte count shown in those units with two decimals; `len` for how many items a list holds).
The block between `<!--figures-->` and `<!--/figures-->` becomes a table of every figure of every page with the
command that prints it. `python scripts/readme_figures.py` rewrites the pages; `--check` exits 1 when one is stale.
"""
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
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


def pages() -> list:
    """README.md, then docs/*.md in name order: every page that may hold figures."""
    return [README] + sorted(DOCS.glob("*.md"))


def render(text: str, table_rows=None) -> str:
    """`text` with its figures filled; its figures table lists `table_rows` (default: this text's own figures)."""
    rows = []

    def fill(m):
        file, key, spec = m.group(1), m.group(2), m.group(3)
        value, command = lookup(file, key)
        shown = fmt(value, spec)
        rows.append((file, key, shown, command))
        return f"<!--fig {file} {key} {spec}-->{shown}<!--/fig-->"

    text = FIG.sub(fill, text)
    if table_rows is not None:
        rows = table_rows
    seen, lines = set(), ["| figure | value | printed by |", "|---|---|---|"]
    for file, key, shown, command in rows:
        if (file, key) not in seen:
            seen.add((file, key))
            lines.append(f"| `{file}: {key}` | {shown} | `{command}` |")
    return TABLE.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), text)


def figure_rows(text: str) -> list:
    """(file, key, shown, command) of each figure in `text`, in order."""
    return [(f, k, fmt(lookup(f, k)[0], spec), lookup(f, k)[1]) for f, k, spec, _ in FIG.findall(text)]


def render_all(texts: dict) -> dict:
    """{path: text} -> {path: filled text}; a figures table anywhere lists the figures of every page."""
    rows = [r for t in texts.values() for r in figure_rows(t)]
    return {p: render(t, rows) for p, t in texts.items()}


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description="Fill the figures of README.md and docs/*.md from benchmarks/results/*.json (rewrites them).")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 when a page's figures are stale")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    old = {p: p.read_text(encoding="utf-8") for p in pages()}
    new = render_all(old)
    stale = [p for p in old if new[p] != old[p]]
    if args.check:
        if stale:
            names = ", ".join(p.relative_to(REPO).as_posix() for p in stale)
            print(f"figures are stale in {names}: run python scripts/readme_figures.py", file=sys.stderr)
            return 1
        return 0
    for p in stale:
        p.write_text(new[p], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
