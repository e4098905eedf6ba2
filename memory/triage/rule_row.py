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


def requested_free(x, of_total: bool) -> str:
    """(trfix, review B2) PyTorch's request against the card's free figure, as the activations rows state it; where the message
    gave no free figure (nor the reserved one it follows from: case.free_said) the card's total stood in for it, so none is
    stated; (rev65b) where the figure is total less PyTorch's reserved (case.free_worked), it is stated as that, not as free."""
    if not getattr(x, "free_said", True):
        return (f"{fmt_bytes(x.req)} requested" if x.req else "no request read") + f" of a {fmt_bytes(x.total)} card (the message gives no free figure)"
    if getattr(x, "free_worked", False):
        # (rev65b) the figure is the card less PyTorch's reserved (case.free_worked_out), not the driver's free memory
        said = "the message's free figure is that difference" if x.n.get("free") is not None else "the message gives no free figure"
        return ((f"{fmt_bytes(x.req)} requested;" if x.req else "no request read;")
                + f" {fmt_bytes(x.free)} of {fmt_bytes(x.total)} is not PyTorch's (total less PyTorch's reserved; {said})")
    # ((round 98) a message quoted from its bracket or its second sentence gives no request: none is stated)
    return (f"{fmt_bytes(x.req)} requested" if x.req else "no request read,") + f" with {fmt_bytes(x.free)} free" + (
        f" of {fmt_bytes(x.total)}" if of_total else "")
