"""The fact gate (lines.FACT_KEYS): a line is tried only against the facts whose gate words it holds. Keys overlap
("--kv-cache-dtype" holds "--", "ggml_extend.hpp:" holds "ggml_", "100%|" holds "%|"): every key a line holds must
open its facts, whichever longer key it sits in or runs into."""
import itertools

import pytest

from gpu_garden.memory.triage import lines as L

NAMES = [name for name, _ in L.FACTS]
OWNERS = {}
for _name, _keys in L.FACT_KEYS.items():
    for _k in _keys:
        OWNERS.setdefault(_k, set()).add(_name)


def _overlaps():
    """(longer or leading key, other key, a line holding both where the other occurs only inside or across the first)."""
    for a, b in itertools.permutations(OWNERS, 2):
        if not OWNERS[b] - OWNERS[a]:
            continue
        if b in a:
            yield a, b, f"x {a} x"
        else:
            k = next((k for k in range(min(len(a), len(b)) - 1, 0, -1) if a.endswith(b[:k])), 0)
            if k:
                yield a, b, f"x {a}{b[k:]} x"


PAIRS = list(_overlaps())


def test_the_table_has_nested_keys():
    nested = {(a, b) for a, b, _ in PAIRS if b in a}
    assert {("--kv-cache-dtype", "--"), ("n_ctx_per_seq", "n_ctx"), ("ggml_extend.hpp:", "ggml_"), ("│ > ", "│ "),
            ("--> ", "--"), ("compute buffer size:", "compute buffer size"), ("100%|", "%|")} <= nested
    assert len(PAIRS) > 300          # and keys running into one another ("Loader" + "rror loading")


def test_every_key_a_line_holds_opens_its_facts():
    missed = []
    for a, b, line in PAIRS:
        got = {NAMES[i] for i in L.gated(line)}
        if not (OWNERS[a] | OWNERS[b]) <= got:
            missed.append((a, b, sorted((OWNERS[a] | OWNERS[b]) - got)))
    assert not missed, missed[:10]


@pytest.mark.parametrize("line, both", [
    # stable-diffusion.cpp's logger names its file: the runtime and ggml's marker, and the part it failed on
    ("[ERROR] ggml_extend.hpp:1587 - vae: failed to allocate the compute buffer", {"runtime_marker", "ggml_marker", "sdcpp_compute"}),
    ("100%|██████████| 20/20 [00:41<00:00,  2.08s/it]", {"progress_done", "progress"}),
    ("-c 32768 --kv-cache-dtype fp8", {"ggml_args", "vllm_kv_dtype"}),
])
def test_a_line_holding_both_facts_yields_both(line, both):
    assert both <= {name for name, _ in L.facts(line)}
