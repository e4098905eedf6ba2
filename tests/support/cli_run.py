"""`gpu-garden estimate` run in-process for a test: (exit code, stdout, stderr); a usage error's SystemExit is its code."""
from gpu_garden.memory import cli


def estimate(capsys, *argv):
    try:
        rc = cli.main(["estimate", *argv])
    except SystemExit as exc:  # a usage error: argparse's one line, exit 2
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err
