"""The runner-up of an answer that stands alone: when one cause fired, and too weakly to be stated (its confidence is
under rank.UNCERTAIN), the answer is "uncertain" but had no second cause to show. The rows fire exactly as alone()
decides, on any row's lone activations or "other" under rank.UNCERTAIN with more than twice WEIGHT points (0.9-1.7):
the generic readings of an allocation failure (activations 1.0-1.5, "other" 1.0 when nothing else scored) and specific
rows alike (Level Zero's limits, Metal's command buffer, libplacebo's device heap). These rows, read last (after the
fallbacks), give the likeliest other reading a few points, so the answer names it beside the first, with its guide.

Chosen at first sight (benchmarks/triage_calibration.py: each batch at the rules it met), groups A-C (batches 01-34): of
the answers whose top cause stood alone under rank.UNCERTAIN, the commonest true cause other than the lone one; the
check, groups D-E (batches 35 on), named the same runner-up for both when the table was chosen (docs/triage-accuracy.md,
"The runner-up of a lone answer", holds its counts; the results' first_sight.lone.d_e_agrees says whether it still
does). The calibration run exits 1 when this table is not what A-C gives.

A runner-up has no evidence of its own, so it must never make a pair (rank.pair: "two causes fit the evidence about
equally"; the panel, web/lib/oom_parts.js, reads the same `pair`). Beside a lone cause of p points the two show as
p / (p + WEIGHT + rank.NOT_DETERMINED) and WEIGHT / (the same), so the second is WEIGHT / p of the first, rounded: the row
fires only where p * rank.PAIR_RATIO > WEIGHT (alone(), lone()), and WEIGHT is 0.45, not 0.5. By hand: beside a lone 1.0,
1.0 / 2.2 = 0.45 and 0.45 / 2.2 = 0.20, under 0.225 (at 0.5 it was 0.44 and 0.22: exactly rank.PAIR_RATIO, a pair);
beside 1.5, 0.56 and 0.17; at the floor, 0.9 / 2.1 = 0.43 and 0.45 / 2.1 = 0.21, under 0.215; the whole range alone()
admits (0.9 to 1.7, where the lone cause reaches 0.70 and is stated) is checked in tests/unit/test_triage_runner_up.py.
WEIGHT is under every lone row the row fires on, so the first cause stays first; an answer that was certain is not
touched (the row fires only where the lone cause's confidence is under rank.UNCERTAIN). The answer reads
"X? (Y also possible)".
"""
from .rule_row import Rule as R

WEIGHT = 0.45

# lone cause -> (its runner-up, answers on A-C where that was the true cause, lone answers on A-C)
RUNNER_UP = {
    "activations": ("weights-exceed-vram", 24, 90),
    "other": ("activations", 7, 18),
}

# (rev17 S1) said to a user of any runtime and device: "in GPU memory" (Metal's and other unified memory too), and the
# working memory's sizes as image models and LLM runtimes both name them
_SAID = {"weights-exceed-vram": "the model's weights do not fit in GPU memory",
         "activations": "this step's working memory (the batch, image size or context length) does not fit in GPU memory"}


def lone(points, weight, mass, threshold, pair_ratio):
    """The cause that stood alone in `points` ((cause, points) pairs, as plain data), else None: the only cause with
    points, with enough that `weight` beside them stays under `pair_ratio` of them (points * pair_ratio > weight), and too
    few to be stated: its confidence with `mass` beside it (points / (points + mass), rounded as rank.ranked rounds) is
    under `threshold`. The one check of a lone answer: alone() (the rows) and benchmarks/triage_calibration.py's lone
    table (the corpus replay, with the current package) both call it."""
    fired = [(c, p) for c, p in points if p and p > 0]
    if len(fired) != 1:
        return None
    c, p = fired[0]
    return c if p * pair_ratio > weight and round(p / (p + mass), 2) < threshold else None


def alone(cause):
    """Only `cause` has points so far, enough that WEIGHT beside them stays under rank.PAIR_RATIO of them (so more than
    WEIGHT: the first cause stays first, and the two are never a pair), and too few to be stated: its confidence as
    rank.ranked would show it (points / (points + rank.NOT_DETERMINED), rounded) is under rank.UNCERTAIN (lone())."""
    def when(x):
        from . import rank         # (rank imports the rules table: read at call time)
        return lone(x.scored.items(), WEIGHT, rank.NOT_DETERMINED, rank.UNCERTAIN, rank.PAIR_RATIO) == cause
    return when


# How every runner-up's evidence opens (support/triage_event.fired() keys on it). What is true of every log the row fires
# on: this failure's own rows gave one cause (a log of several failures scores each alone, and the lone row may be a
# specific one: Level Zero's limits, libplacebo's device heap), so not "nothing else in the log".
SAYS = "no other sign for this failure; the likeliest other reading"


def _evidence(lone, second, n, of):
    return (f"{SAYS} is that {_SAID[second]} "
            f"(of {of} such failures seen before the rules were tuned, {n} were {second})")


RUNNER_UP_ROWS = [R(second, WEIGHT, alone(lone), _evidence(lone, second, n, of))
                  for lone, (second, n, of) in RUNNER_UP.items()]
