"""rev54: where the user's own flag is what does not fit (kv55 keeps it), the largest-context line read
"f16 0, q8_0 0, q4_0 0", as if no context fitted at all; it now points to the note that names what would."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.report import format_plan

GiB = 1 << 30


def _line(text):
    return next(l for l in text.splitlines() if l.startswith("largest context"))


def test_users_ngl_that_does_not_fit_points_to_the_note():
    # Qwen3-8B Q8_0 (8.11 GiB of weights) with every layer on an 8 GiB card: kv55 keeps -ngl 99 and names -ngl 33
    r = llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "llama.cpp", ctx=4096, vram=8 * GiB, weights_dtype="Q8_0", ngl=99)
    line = _line(format_plan(r))
    assert "none at these settings" in line and "f16 0" not in line
    assert "-ngl 33 with the KV cache at q8_0 does" in " ".join(format_plan(r).split())  # the note, however wrapped


def test_a_context_that_fits_is_still_listed_by_cache_type():
    r = llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "llama.cpp", ctx=4096, vram=24 * GiB, weights_dtype="Q8_0")
    line = _line(format_plan(r))
    assert line.startswith("largest context (-c): f16 ") and "none" not in line
