"""Ranking: run the rules table over one failure's Case, sum each cause's points, rank the causes.

confidence = a cause's points / (all points + NOT_DETERMINED). Under UNCERTAIN (0.7) the answer says so and offers
the top two side by side (render.py, and the panel from the same result)."""
import collections
import math

from . import rules as R

# At first sight (benchmarks/triage_calibration.py: each batch at the rules it met) a top cause scoring 0.50-0.70
# was right 54 of 134 times on groups A-C (batches 01-34), from 0.70 up 176 of 292; the check, groups D-E:
# 7 of 15 and 34 of 59. Under 0.70 the first cause is more often wrong than right, so it is not stated alone.
UNCERTAIN = 0.7

# An uncertain answer calls its top two a pair ("two causes fit about equally") only when the second has at least this
# share of the first's confidence; under it the first is only the likelier ("X? (Y also possible)"). The panel
# (web/lib/oom_parts.js PAIR_RATIO, pinned equal by tests/unit/test_triage_pair.py) decides from the same two confidences.
PAIR_RATIO = 0.5

# "Not determined" holds a fixed 0.75 points in every ranking, as if a row for it always fired: a cause's share is of
# the points that fired plus these, so one weak row alone is not certain (the generic fallbacks, 1.0-1.5, score
# 0.57-0.67, under UNCERTAIN) while a strong one alone is (3.0: 0.80). Chosen at first sight on groups A-C
# (benchmarks/triage_calibration.py: each case's points at the rules its batch met): the fewest answers whose
# "uncertain" flag is wrong (wrong and confident + right but uncertain), 179 at 0 -> 159 at 0.70-0.75 (0.75 taken);
# the check, D-E (batches 35-47): wrong and confident 30 -> 14, `shown` 53 -> 53, right but uncertain 11 -> 19.
# Top-1 does not depend on it.
NOT_DETERMINED = 0.75


def score(case, rules=None) -> tuple[dict, dict]:
    """Points and evidence per cause, in the order the rows fired."""
    points, evidence = collections.defaultdict(float), collections.defaultdict(list)
    case.scored = points
    done_groups = set()
    for rule in R.RULES if rules is None else rules:
        if rule.first is not None and rule.first in done_groups:
            continue
        if not rule.when(case):
            continue
        if rule.first is not None:
            done_groups.add(rule.first)
        cause = rule.cause
        if cause == R.LEADER:
            cause = max(points, key=points.get) if points else "weights-exceed-vram"
        points[cause] += rule.weight * (case.hint if rule.hint else 1.0)
        text = R.evidence(rule, case)
        if text and text not in evidence[cause]:
            evidence[cause].append(text)
    return points, evidence


def ranked(points: dict, evidence: dict) -> list:
    total = math.fsum(max(v, 0) for v in points.values()) + NOT_DETERMINED       # exact: independent of row order
    return [{"id": c, "confidence": round(max(v, 0) / total, 2), "evidence": evidence[c][:6]}
            for c, v in sorted(points.items(), key=lambda kv: (-kv[1], R.CAUSES.index(kv[0]))) if v > 0]


def diagnose(case, rules=None) -> list:
    """The ranked causes of one failure: [{"id", "confidence", "evidence"}], best first."""
    return ranked(*score(case, rules))


def uncertain(causes: list) -> bool:
    """Under UNCERTAIN, on the confidence as shown (rounded to 0.01): a cause shown at 70 % is stated."""
    return bool(causes) and causes[0]["confidence"] < UNCERTAIN


def pair(alternatives: list) -> bool:
    """An uncertain answer's top two fit about equally: the second's shown confidence is PAIR_RATIO of the first's or more."""
    return (len(alternatives) >= 2 and alternatives[0]["confidence"] > 0
            and alternatives[1]["confidence"] >= PAIR_RATIO * alternatives[0]["confidence"])
