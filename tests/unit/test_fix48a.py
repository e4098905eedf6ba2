"""Task fix48a: review rev21's findings on session 48's merged work.

B1. The "-ub above -b" note named -b whenever -ub > -b, but the micro-batch is min(-c, -b, -ub) (llamacpp.micro_batch;
    ik_llama.cpp pads -c first: 256 cells with flash attention, 32 without). Worked by hand:
      mainline -c 1024 -ub 4096 (-b 2048 by default): min(1024, 2048, 4096) = 1024, capped by -c
      mainline -c 3000 -ub 4096: min(3000, 2048, 4096) = 2048, capped by -b, and -c 3000 < 4096 as well
      ik_llama.cpp -c 1100 -ub 4096: -c padded to 1280 (flash attention, 5 x 256) or 1120 (without, 35 x 32), below -b
      ik_llama.cpp -c 1100 -b 8: -b raised to GGML_KQ_MASK_PAD, 16
"""

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

IK = "ik_llama.cpp 3738 (fa90a986)"


def _ub_notes(ctx, fa=True, version="b9849", **knobs):
    out = llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), "llama.cpp", ctx=ctx, parallel=1, flash_attn=fa,
                   ngl=99, runtime_version=version, vram=24 * GiB, weights_dtype="Q4_K_M", ubatch=4096, **knobs)
    return [n for n in out["notes"] if n.startswith("-ub ")]


# Breaking it: the note back on s["ubatch"] > s["batch"] alone (-c 1024 then reads "runs at -b 2048", the figures being
# for 1024), or its cap taken from the -c given on ik_llama.cpp (1100, not 1280 / 1120).
def test_the_micro_batch_note_names_the_cap_that_binds():
    assert _ub_notes(1024) == ["-ub 4096 runs at -c 1024: llama.cpp caps the logical batch at the context and the "
                               "micro-batch at it; the figures are for 1024 (--batch 4096 and a context of at least 4096 "
                               "for 4096)"]
    assert _ub_notes(8192) == ["-ub 4096 runs at -b 2048: llama.cpp caps the micro-batch at the logical batch (its "
                               "default); the figures are for 2048 (--batch 4096 for 4096)"]
    assert _ub_notes(3000)[0].endswith("the figures are for 2048 (--batch 4096 and a context of at least 4096 for 4096)")
    assert _ub_notes(1024, batch=4096)[0].startswith("-ub 4096 runs at -c 1024: ")
    assert _ub_notes(1024, batch=4096)[0].endswith("(a context of at least 4096 for 4096)")
    assert _ub_notes(8192, batch=4096) == []
    assert _ub_notes(1100, version=IK) == [
        "-ub 4096 runs at 1280: ik_llama.cpp pads -c 1100 to 1280 (its cache's padding with flash attention) and caps "
        "the logical batch, then the micro-batch, at it; the figures are for 1280 (--batch 4096 and a context of at "
        "least 4096 for 4096)"]
    assert _ub_notes(1100, fa=False, version=IK)[0].startswith("-ub 4096 runs at 1120: ik_llama.cpp pads -c 1100 to 1120 "
                                                                 "(its cache's padding without flash attention)")
    assert _ub_notes(1100, version=IK, batch=8)[0].startswith("-ub 4096 runs at 16: ik_llama.cpp raises -b 8 to "
                                                               "GGML_KQ_MASK_PAD (16)")
    assert _ub_notes(8192, version=IK)[0].startswith("-ub 4096 runs at -b 2048: ik_llama.cpp caps the micro-batch")
