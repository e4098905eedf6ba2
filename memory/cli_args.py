"""argparse pieces the `gpu-garden` parser (cli.py) and a subcommand's own options (estimate/report.py) share, so that a
subcommand's module need not import the command line it is imported by."""
import argparse


class OnOff(argparse.BooleanOptionalAction):
    """--x / --no-x (argparse.BooleanOptionalAction, default None) refused when both are given: argparse takes the last,
    so --cfg --no-cfg was estimated without CFG while --cfg --cond-uncond separate was refused. Repeating one is fine."""

    def __call__(self, parser, namespace, values, option_string=None):
        value = not option_string.startswith("--no-")
        before = getattr(namespace, self.dest, None)
        if before is not None and before != value:
            raise argparse.ArgumentError(self, f"{option_string} contradicts {self.option_strings[0 if before else 1]} "
                                               "given before it: give one")
        setattr(namespace, self.dest, value)


def add_json(parser: argparse.ArgumentParser, what: str = "the answer as one JSON object") -> None:
    """Every subcommand's --json, with one help text (cli.main's _report_error writes an error's object)."""
    parser.add_argument("--json", action="store_true",
                        help=f"print {what} instead of text; an error is one JSON object too: "
                             "{\"error\": ..., \"kind\": usage|input|io, \"command\": ...}")
