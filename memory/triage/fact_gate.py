"""The fact gate and facts(line): a line is tried only against the FACTS (fact_patterns.py) whose gate words
(FACT_KEYS) it holds, found by one trie regex in a time linear in the line. Moved from lines.py (bodies unchanged)."""
import re

from .fact_patterns import FACT_KEYS, FACTS, _FACTS_GATED  # noqa: F401


def _trie_pattern(words) -> str:
    """One regex for many literal words, factored by common prefixes (a plain alternation of ~100 words
    costs ~9 us a line, this ~4 us). Greedy optional tails make it match the longest word at a position,
    as the alternation sorted longest first did."""
    trie = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def rx(node):
        alts = [re.escape(ch) + rx(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return "(?:" + body + ")?" if "" in node else body
    return rx(trie)


# The gate: the trie finds keys left to right without overlap (a C-speed scan); a key found stands for every key inside
# it ("--kv-cache-dtype" for "--", "ggml_extend.hpp:" for "ggml_"), and where a key can start inside it and run past its
# end ("Loader" + "rror loading"), the trie is tried again at that offset. So every key a line holds is found, in a time
# linear in the line (at most a few tries per key found).
_GATE_KEYS = {k for keys in FACT_KEYS.values() for k in keys}
_FACT_GATE = re.compile(_trie_pattern(_GATE_KEYS))
_KEY_FACTS = {}
for _i, (_name, _keys, _rx) in enumerate(_FACTS_GATED):
    for _k in _keys:
        _KEY_FACTS.setdefault(_k, set()).add(_i)
_KEY_FACTS = {k: frozenset(i for k2, ids in _KEY_FACTS.items() if k2 in k for i in ids) for k in _KEY_FACTS}
_INNER = {k: tuple(i for i in range(1, len(k)) if any(b.startswith(k[i:]) and len(b) > len(k) - i for b in _GATE_KEYS))
          for k in _GATE_KEYS}
# the keys that can start inside a key and run past its end ("rror loading" for "Loader"): one the line holds but findall
# did not return is the only reason to retry at each inner offset (in Python, ~7 tries a line); most lines hold none
_PARTNERS = {k: frozenset(b for i in _INNER[k] for b in _GATE_KEYS if b.startswith(k[i:]) and len(b) > len(k) - i)
             for k in _GATE_KEYS}
_UNION = {}          # for each small set of keys findall returns: their facts, and the partners not among them (bounded)


def gated(line: str) -> frozenset:
    """The indexes (in FACTS) of the facts whose gate words the line holds: the only ones facts() tries."""
    found = _FACT_GATE.findall(line)
    if not found:
        return frozenset()
    key = frozenset(found)      # (a line repeating a key many times is one key, cached)
    hit = _UNION.get(key)
    if hit is None:
        hit = (frozenset().union(*(_KEY_FACTS[k] for k in key)), tuple(frozenset().union(*(_PARTNERS[k] for k in key)) - key))
        if len(key) <= 16 and len(_UNION) < 4096:
            _UNION[key] = hit
    if not any(b in line for b in hit[1]):
        return hit[0]
    idx = set()
    for m in _FACT_GATE.finditer(line):
        k = m.group()
        idx |= _KEY_FACTS[k]
        for i in _INNER[k]:
            m2 = _FACT_GATE.match(line, m.start() + i)
            if m2:
                idx |= _KEY_FACTS[m2.group()]
    return frozenset(idx)



_LINE_FACTS = {}     # the last LINE_FACTS_KEPT distinct lines -> their facts: a log repeating a failure repeats its lines
LINE_FACTS_KEPT = 64


def facts(line: str) -> tuple:
    """(name, match) for each fact pattern that matches the line, in FACTS order."""
    got = _LINE_FACTS.get(line)
    if got is None:
        got = tuple((name, m) for name, _, rx in (_FACTS_GATED[i] for i in sorted(gated(line))) for m in (rx.search(line),) if m)
        if len(_LINE_FACTS) >= LINE_FACTS_KEPT:
            _LINE_FACTS.clear()
        _LINE_FACTS[line] = got
    return got
