"""`gpu-garden` run in-process for a test: (exit code, stdout, stderr); a usage error's SystemExit is its code."""
import json

from gpu_garden.memory import cli


def flat(text: str) -> str:
    """The text with its wrapping undone: runs of spaces and newlines as one space (memory/term.py wraps prose)."""
    return " ".join(text.split())


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
