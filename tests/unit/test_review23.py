"""Task review23: mends to session 22's later changes, each test failing before its fix."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB


# 1. kv --n-cpu-moe on a --fit build: llama.cpp's fit (common/fit.cpp) lowers -c, then stops before placing layers when
# the user set a tensor override, which --n-cpu-moe is ("model_params::tensor_buft_overrides already set by user,
# abort"; the load then runs unfitted). The "or let the runtime fit itself: --fit on" alternative printed under a
# command carrying --n-cpu-moe must say to drop it; without --n-cpu-moe the alternative stays as it was.
def test_fit_alternative_beside_n_cpu_moe_says_to_drop_it():
    s = llm.describe(model="openai/gpt-oss-20b")
    kw = dict(ctx=32768, parallel=1, weights_dtype="MXFP4", vram=8 * GiB, runtime_version="b8193")
    moved = llm.plan(s, "llama.cpp", n_cpu_moe=12, **kw)
    assert "--n-cpu-moe 12" in moved["command"]
    (fit,) = moved["autofit"]
    assert "without --n-cpu-moe" in fit["flag"] and "tensor_buft_overrides already set by user" in fit["reason"]
    (plain,) = llm.plan(s, "llama.cpp", **kw)["autofit"]
    assert plain["flag"] == "--fit on" and "n-cpu-moe" not in plain["reason"]
