"""Triage after batches 91-92 (round 51). Lines written from ds4's GLM memory-guard refusal (antirez/ds4#889's five lines)
and ComfyUI's cudaMallocAsync "Allocation on device" block (kijai/ComfyUI-SUPIR#93's form); models, contexts and numbers
made up, expected values by hand."""
from support.triage_event import top

GIB = 1 << 30


def ds4_guard(model_map, graph, required, budget, base, reserve="32.00"):
    return (f"ds4: GLM memory guard refused ctx=262144 compact_cap=262144 before GLM graph allocation\n"
            f"ds4:   model map: {model_map} GiB\n"
            f"ds4:   graph cache/scratch: {graph} GiB (full KV 0.72 GiB, compact DSA 2.90 GiB, scratch 1.10 GiB)\n"
            f"ds4:   required model+graph: {required} GiB; guard budget: {budget} GiB (base {base} GiB, fraction 0.99, "
            f"reserve {reserve} GiB, transient 0.00 GiB)\n"
            "ds4:   GLM-5.3 has a fixed 80 GiB per-rank ceiling; use a smaller --ctx, tensor parallelism, or SSD streaming\n")


# a 92.10 GiB plan refused by an 80 GiB ceiling on a 256 GiB machine, whose own formula allows 256 x 0.99 - 32 = 221.44 GiB
FIXED_CEILING = ds4_guard("87.38", "4.72", "92.10", "80.00", "256.00")
# a 150.00 GiB model map on a 128 GiB machine: the formula allows 128 x 0.99 - 32 = 94.72 GiB, under the map alone
MAP_OVER = ds4_guard("150.00", "4.72", "154.72", "80.00", "128.00")


def test_ds4_memory_guard_is_read_with_its_runtime_and_figures():
    """The refusal is an event of its own (before: no out-of-memory error found): ds4, the sum, the budget, the base."""
    _, _, ev = top(FIXED_CEILING)
    assert (ev["kind"], ev["runtime"]) == ("ds4.memory_guard", "ds4"), (ev["kind"], ev["runtime"])
    assert sorted(ev["numbers"]) == ["limit", "required", "total"], ev["numbers"]
    for k, v in (("required", 92.10), ("limit", 80.00), ("total", 256.00)):
        assert abs(ev["numbers"][k] - v * GIB) < 0.01 * GIB, (k, ev["numbers"])


def test_ds4_guard_under_its_own_formula_is_the_guard():
    """The plan fits what the guard's own formula gives from the machine's base: the printed budget is a fixed ceiling
    below it, so the refusal is the guard's (other), not a shortage."""
    cause, scores, ev = top(FIXED_CEILING)
    assert cause == "other", ev["causes"]
    assert "fixed ceiling" in ev["causes"][0]["evidence"][0], ev["causes"][0]
    assert "221.44 GiB" in ev["causes"][0]["evidence"][0], ev["causes"][0]


def test_ds4_guard_with_the_map_over_its_own_formula_is_the_weights():
    """The model map alone passes what the formula allows on the machine: the model is too large."""
    cause, scores, ev = top(MAP_OVER)
    assert cause == "weights-exceed-vram", ev["causes"]
    assert "model map alone is 150.00 GiB" in ev["causes"][0]["evidence"][0], ev["causes"][0]


# cudaMallocAsync's block (ComfyUI's default allocator): "Currently allocated" only, no reserved figure; a sampler node fails
# with 3.04 GiB of a 24 GiB card outside what is allocated (under 15 % of it) and a 1.02 GiB request
ASYNC_GAP = """Error occurred when executing KSamplerAdvanced:

Allocation on device 0 would exceed allowed memory. (out of memory)
Currently allocated     : 20.95 GiB
Requested               : 1.02 GiB
Device limit            : 23.99 GiB
Free (according to CUDA): 0 bytes
PyTorch limit (set by user-supplied memory fraction)
                        : 17179869184.00 GiB
"""


def test_async_gap_beyond_a_context_is_not_read_as_another_program():
    """The pool keeps what this process freed (neither allocated nor free), so a gap of a few GiB beyond a CUDA context
    under half the card is this process's as much as another program's: the sampler's working tensors lead, not
    other-process (round 51 removed the 2.6 row that read the gap beyond ~1 GiB as another program)."""
    cause, scores, ev = top(ASYNC_GAP)
    assert cause == "activations", ev["causes"]
    assert scores.get("other-process", 0) < scores["activations"], scores
