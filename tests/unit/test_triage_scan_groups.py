"""window.line_starts finds the lines holding any anchor word with one regex pass per lead byte (chosen by
window.BYTE_PERCENT): the byte, the rest of each word after it as a trie, a lookbehind for the part before it. It must
find exactly the lines a plain per-word bytes.find finds, for every anchor tuple the scanner uses, at block edges and
between lo and hi."""
import random

import pytest

from gpu_garden.memory.triage import lines as L
from gpu_garden.memory.triage import window as W

TUPLES = {name: getattr(L, name) for name in ("IDLE_ANCHORS", "TAIL_ANCHORS", "ANCHORS", "OPEN_ANCHORS", "OPEN_ANCHORS_TRAINED",
                                               "HEAD_ANCHORS", "WINDOW_KEYS", "WINDOW_KEYS_TRAINED")}


def _reference(block, needles, lo=0, hi=None):
    """One bytes.find pass a word (what the scanner did before the grouped patterns)."""
    hi = len(block) if hi is None else hi
    out = set()
    for k in needles:
        i = block.find(k, lo, hi)
        while i >= 0:
            out.add(block.rfind(b"\n", 0, i) + 1)
            e = block.find(b"\n", i)
            if e < 0:
                break
            i = block.find(k, e, hi)
    return out


def _lines(needles, rng):
    """Each word whole, each word without its first byte, each word without its last byte (the two cut forms must
    not be found: a pattern that dropped its lookbehind, or matched a byte short, would find them)."""
    out = []
    for w in needles:
        pad = bytes(rng.choice(b"abc xyz019:_") for _ in range(rng.randrange(0, 6)))
        out += [pad + w + pad, b"> " + w[1:] + b" <", b"> " + w[:-1] + b" <"]
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("name", sorted(TUPLES))
def test_grouped_search_finds_the_lines_each_word_finds(name):
    needles = TUPLES[name]
    rng = random.Random(7)
    lines = _lines(needles, rng)
    block = b"\n".join(lines) + b"\n"
    got = W.line_starts(block, needles)
    assert got == _reference(block, needles)
    # each line's own start (a find of the line's text could land on the tail of an earlier line ending the same way)
    at = [0]
    for ln in lines:
        at.append(at[-1] + len(ln) + 1)
    whole = {at[i] for i, ln in enumerate(lines) if any(w in ln for w in needles)}
    assert got == whole                        # every line holding a word, and no other
    # a window of the block between line boundaries: words on lines outside it are not found
    starts = [0] + [i + 1 for i, c in enumerate(block) if c == 0x0A]  # every line boundary
    lo, hi = starts[len(starts) // 3], starts[2 * len(starts) // 3]
    assert W.line_starts(block, needles, lo, hi) == _reference(block, needles, lo, hi)


@pytest.mark.parametrize("name", sorted(TUPLES))
def test_cut_words_are_not_found(name):
    needles = TUPLES[name]
    for w in needles:
        for cut in (w[1:], w[:-1]):
            block = b"> " + cut + b" <\n"
            assert W.line_starts(block, needles) == _reference(block, needles), (w, cut)


def test_a_word_at_the_block_edges():
    w = b"CUDA out of memory"
    assert W.line_starts(w, L.IDLE_ANCHORS) == {0}                      # no newline at all
    block = b"x\n" * 3 + w                                                # the last bytes, no final newline
    assert W.line_starts(block, L.IDLE_ANCHORS) == {6}
    assert W.line_starts(block, L.IDLE_ANCHORS, 0, 6) == set()            # hi before the word's line
    assert W.line_starts(b"CUDA out of mem\nory\n", L.IDLE_ANCHORS) == set()  # a word split over two lines is no word
    two = w + b"\n" + w + b"\n"                                            # a word at the first byte of the next line
    assert W.line_starts(two, L.IDLE_ANCHORS) == {0, len(w) + 1}
    assert W.line_starts(two, (b"CUDA",)) == {0, len(w) + 1}


def test_every_word_is_searched():
    """A word that holds no cover piece is looked for alone: every word of every tuple lands in some pattern."""
    for needles in TUPLES.values():
        for w in needles:
            assert W.line_starts(w + b"\n", needles) == {0}, w


def test_any_words_and_a_bounded_cache():
    """Words outside every cover piece, with regex metacharacters or a repeated piece, given as a list: found as
    bytes.find finds them; and a caller building a new tuple per call cannot grow the pattern cache without bound."""
    words = [b"a.b*c", b"(ail|ail)", b"ailail", b"x[mem]y", b"zz^$"]
    block = b"\n".join([b"pre " + w + b" post" for w in words] + [b"a-b-c", b"ai", b"nothing"]) + b"\n"
    assert W.line_starts(block, words) == _reference(block, words)
    for i in range(100):
        W.line_starts(block, (b"w%d" % i, b"mem"))
    assert len(W._GROUPS) <= 32


def test_words_inside_words_and_shared_tails():
    """Words that end inside another (a lookbehind leaf beside trie branches), share a lead byte at different offsets
    or repeat it: every line found as bytes.find finds it, and a cut word is no word."""
    words = [b"memory", b"out of memory", b"mem", b"emo", b"yes", b"ayes", b"eye", b"QQ", b"xQQy", b"QQQ"]
    rng = random.Random(11)
    lines = _lines(words, rng) + [b"me", b"emory", b"out of memor", b"Q", b"xQ"]
    rng.shuffle(lines)
    block = b"\n".join(lines) + b"\n"
    assert W.line_starts(block, words) == _reference(block, words)
    for w in words:
        assert W.line_starts(b"> " + w + b" <\n", words) == {0}, w
