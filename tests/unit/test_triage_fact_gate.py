"""The fact gate (lines.FACT_KEYS): a line is tried only against the facts whose gate words it holds. Keys overlap
("--kv-cache-dtype" holds "--", "ggml_extend.hpp:" holds "ggml_", "100%|" holds "%|"): every key a line holds must
open its facts, whichever longer key it sits in or runs into."""
import itertools

import pytest

from gpu_garden.memory.triage import facts as F, lines as L
from gpu_garden.memory.triage import scan as S

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
    ("python -m vllm.entrypoints.openai.api_server --gpu-memory-utilization 0.8 --max-model-len 4096", {"vllm_util", "vllm_marker"}),
])
def test_a_line_holding_both_facts_yields_both(line, both):
    assert both <= {name for name, _ in L.facts(line)}


@pytest.mark.parametrize("line, util", [
    ("python -u -m vllm.entrypoints.openai.api_server --model mistralai/Mistral-7B-v0.1 --dtype half --gpu-memory-utilization 0.8  --max-model-len 4096", 0.8),
    ("$ vllm serve alpindale/WizardLM-2-8x22B --max-model-len 8192 --gpu-memory-utilization=0.50 --enforce-eager", 0.5),
    ("vllm serve Qwen/Qwen2.5-7B-Instruct --gpu_memory_utilization 0.4", 0.4),
    ("llm = LLM(model='facebook/opt-125m', gpu_memory_utilization=0.35)", 0.35),
    ("Initializing an LLM engine (v0.6.3) with config: model='m', enforce_eager=False, gpu_memory_utilization: 0.9", 0.9),
])
def test_vllm_util_reads_the_flag_as_vllm_takes_it(line, util):
    sc = S.Scan()
    F.apply(sc, 1, line)
    assert sc.facts["vllm_util"] == util


def test_prose_naming_the_setting_sets_no_utilization():
    sc = S.Scan()
    F.apply(sc, 1, "Try increasing gpu_memory_utilization when initializing the engine, or --gpu-memory-utilization with vllm serve.")
    assert sc.facts["vllm_util"] is None
