"""`gpu-garden` run in-process for a test: (exit code, stdout, stderr); a usage error's SystemExit is its code."""
import json

from gpu_garden.memory import cli


def flat(text: str) -> str:
    """The text with its wrapping undone: runs of spaces and newlines as one space (memory/term.py wraps prose)."""
    return " ".join(text.split())


def unwrap(text: str, cols: int = 80) -> str:
    """The text with term.wrap's line breaks undone, line structure kept (flat() drops it): a line continues the one
    above when it hangs where term._fill hangs it (2 past the first line's indent, or past its bullet) and its first
    unbreakable chunk did not fit on the line above (textwrap's greedy rule). For tests that find a line by its start;
    the text as printed in a pipe (80 columns)."""
    from gpu_garden.memory import term
    out, hang, last, prose = [], None, "", False
    for line in text.split("\n"):
        body = line.lstrip()
        chunk = term._hold(body).split()[0] if body else ""
        if (prose and body and len(line) - len(body) == hang and len(last) + 1 + len(chunk) > cols
                and not term._TABLE.search(body)):
            out[-1] += " " + body
        else:
            out.append(line)
            prose = not term.keep(line)  # a table row or a command is never wrapped: nothing continues it
            m = term._BULLET.match(line)
            hang = len(m.group(0)) if m else len(line) - len(body) + 2
        last = line
    return "\n".join(out)


def estimate(capsys, *argv):
    try:
        rc = cli.main(["estimate", *argv])
    except SystemExit as exc:  # a usage error: argparse's one line, exit 2
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def run(argv, capsys):
    """Any subcommand: (exit code, stdout parsed as JSON when argv has --json and there is output, else the text, stderr)."""
    try:
        rc = cli.main(argv)
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    cap = capsys.readouterr()
    return rc, (json.loads(cap.out) if "--json" in argv and cap.out else cap.out), cap.err


def text(argv, capsys):
    """(exit code, stdout) of any subcommand."""
    rc, out, _ = run(argv, capsys)
    return rc, out


def json_out(argv, capsys):
    """The parsed --json output of any subcommand (argv without --json)."""
    return run(argv + ["--json"], capsys)[1]


def estimate_workflow(tmp_path, capsys, wf, *args):
    """`estimate --workflow` on a workflow dict written to tmp_path, with --ram 64 so host RAM decides nothing."""
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(wf))
    return estimate(capsys, "--workflow", str(p), "--ram", "64", *args)
