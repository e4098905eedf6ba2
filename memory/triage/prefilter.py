"""The recogniser prefilter: a recogniser is tried only on a line holding one of its words. Each recogniser names
them (its `keys`, needs() of its pattern, or @_gate for the ones defined in parse.py); _prefilter() joins every
word into one pattern, which parse.recognise() runs once a line."""
import re

from .lines import _trie_pattern

try:
    from re import _parser as _sre, _constants as _sc
except ImportError:         # Python < 3.11
    import sre_parse as _sre, sre_constants as _sc


def needs(rx):
    """A tuple of literals one of which every match of `rx` holds, read from its parsed form (a run of literals in the
    pattern's main sequence, or one in each branch of an alternation), the longest such; None when there is none."""
    if rx.flags & re.IGNORECASE:
        return None
    try:
        return _needs(_sre.parse(rx.pattern, rx.flags))
    except Exception:           # a parser this code does not know: no prefilter, never a wrong one
        return None


def _needs(items):
    cands, run = [], []
    for op, av in items:
        if op is _sc.LITERAL:
            run.append(chr(av))
            continue
        if run:
            cands.append(("".join(run),))
            run = []
        if op is _sc.SUBPATTERN:
            if av[1] or av[2]:      # flags set inside: not read
                return None
            cands.append(_needs(av[3]))
        elif op is _sc.BRANCH:
            alts = [_needs(b) for b in av[1]]
            if all(alts):
                cands.append(tuple(w for a in alts for w in a))
        elif op in (_sc.MAX_REPEAT, _sc.MIN_REPEAT) and av[0] >= 1:
            cands.append(_needs(av[2]))
    if run:
        cands.append(("".join(run),))
    cands = [c for c in cands if c]
    return max(cands, key=lambda c: min(len(w) for w in c)) if cands else None


def _gate(*needed):
    """The recogniser returns None on a line that holds none of these words (given, or needs() of a pattern): the
    prefilter skips it there. Say every pattern a match can come from."""
    def mark(fn):
        fn.needed = needed
        return fn
    return mark


def _words(needed) -> tuple:
    words = []
    for n in needed or ():
        w = (n,) if isinstance(n, str) else needs(n)
        if w is None:
            return ()
        words.extend(w)
    return tuple(words)


def _prefilter():
    """The words of every gated recogniser as one pattern tried at each offset (a lookahead: overlapping words are all
    found; at one offset the longest, which stands for every word inside it), and each word's recognisers. Built on the
    first recognise(), not at import (parsing the patterns again and compiling this one take tens of ms)."""
    from .parse import RECOGNISERS  # parse imports this module
    by_word, always = {}, set()
    for i, rec in enumerate(RECOGNISERS):
        words = _words(getattr(rec, "needed", None))
        if not words:
            always.add(i)
        for w in words:
            by_word.setdefault(w, set()).add(i)
    inside = {w: frozenset(i for w2, ids in by_word.items() if w2 in w for i in ids) for w in by_word}
    return re.compile("(?=(" + _trie_pattern(by_word) + "))"), inside, frozenset(always)
