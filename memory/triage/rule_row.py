"""One row of triage's rule table (rules.py, rules_other.py): its type, the fixed cause vocabulary the guides are written
for, and how a row's evidence sentence is filled from a Case."""
import string
from collections import namedtuple

from ..units import fmt_bytes

CAUSES = ("fragmentation", "weights-exceed-vram", "activations", "vae-decode", "text-encoder",
          "other-process", "kv-cache", "host-ram", "leak", "graph-capture", "other")
LEADER = "<leading cause>"

Rule = namedtuple("Rule", "cause weight when evidence hint first", defaults=(False, None))


class _Formatter(string.Formatter):
    def get_value(self, key, args, case):
        return getattr(case, key)

    def format_field(self, value, spec):
        return fmt_bytes(value) if spec == "b" else super().format_field(value, spec)


_FMT = _Formatter()


def evidence(rule, case) -> str:
    e = rule.evidence
    return e(case) if callable(e) else _FMT.vformat(e, (), case)
