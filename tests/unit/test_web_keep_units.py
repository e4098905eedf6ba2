"""The Unload face wrapped "235.84 MiB -> 0 B" as "... -> 0" / "B" (ux21's first hour, both frontends): server text on
a face now joins each number to its byte unit with a no-break space (web/lib/format.js keepUnits, run in node)."""

from support import node_js


def keep_units(texts):
    return [node_js.call("lib/format.js", "keepUnits", t) for t in texts]


def test_number_and_unit_never_part():
    got = keep_units(["- text encoder (SD1 CLIP) on cpu: 235.84 MiB -> 0 B",
                      "cuda:0: free 9.50 GiB -> 11.25 GiB", "Freed 1.2 GB on cuda:0 (offload): 2 Bytes of 3 B."])
    assert got[0] == "- text encoder (SD1 CLIP) on cpu: 235.84\u00a0MiB -> 0\u00a0B"
    assert got[1] == "cuda:0: free 9.50\u00a0GiB -> 11.25\u00a0GiB"
    # a word that starts with a unit's letters is not a unit; other spaces are left as they are
    assert got[2] == "Freed 1.2\u00a0GB on cuda:0 (offload): 2 Bytes of 3\u00a0B."

