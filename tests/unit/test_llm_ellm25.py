"""Task ellm25: LLM batch 39 after its first sight (regression rows), each change checked by hand against the
runtime's source, its printed figures or a config.json's arithmetic."""
from support.pack import load_benchmark

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def _bench():
    return load_benchmark("bench_llm")


def _llmfit(ngl, notes=(), inferred=None):
    # AlexsJones/llmfit#774: Qwen3-14B Q4_K_M, -c 4096, one slot, on an 8 GB RTX 2080 (7.79 GiB); the author tuned -ngl
    # 32 to fit and says the whole model does not fit 8 GB
    return {"id": "t", "url": "u", "runtime": "llama.cpp", "version": None, "vram_gib": 7.79,
            "input": {"model": "Qwen/Qwen3-14B", "weights_dtype": "Q4_K_M", "ctx": 4096, "parallel": 1, "ngl": ngl},
            "measured": {"fit": False, "started": True}, "notes": list(notes), "inferred": inferred or {}}


def test_partial_ngl_scores_the_run_at_that_ngl_against_started():
    # llama.cpp keeps a user's -ngl (common/fit.cpp: "n_gpu_layers already set by user to 40, abort", printed in the
    # KlimtechRAG Bielik log): the run at -ngl 32 is the outcome, "started"; "fit" is every layer on the GPU. By hand,
    # Qwen3-14B's 14.8e9 parameters at no less than Q4_K's 4.5 bits are 8.3e9 B = 7.75 GiB, with the 384 MiB CUDA
    # context over 7.79 GiB: the whole model does not fit (the author says so too)
    b = _bench()
    s = b.score(_llmfit(32))
    assert s["fits"][1] is True
    assert s["fits_whole"] == (False, False) and s["fits_whole_agree"]


def test_every_layer_is_not_a_partial_ngl():
    # Qwen3-14B: 40 repeating layers + the output = 41 (llama.cpp "offloaded 41/41 layers to GPU"): -ngl 41 is the
    # whole model, scored on "fit" as before; -ngl 40 leaves the output on the CPU (before #18148) or one block
    b = _bench()
    spec = llm.describe(model="Qwen/Qwen3-14B")
    assert b.user_partial_ngl({"input": {"ngl": 40}}, spec)
    assert not b.user_partial_ngl({"input": {"ngl": 41}}, spec)
    assert not b.user_partial_ngl({"input": {"ngl": None}}, spec)
    s = b.score(_llmfit(41))
    assert s["fits"] == (False, False) and "fits_whole" not in s


def test_a_tensor_override_run_has_no_started_verdict():
    # the fit-params README's fitted run: -ngl 48 with -ot blk.14-47 ffn experts=CPU; the input has no override, so
    # the plan at -ngl 48 would put the experts on the GPU: the run's start is not scored, the whole model still is
    b = _bench()
    s = b.score(_llmfit(32, inferred={"ctx": "the fitted arguments '-c 4096 -ngl 32 -ot blk.14-47 ffn experts=CPU'"}))
    assert "fits" not in s and s["fits_whole"] == (False, False)
    s = b.score(_llmfit(32, notes=["llama-server --n-cpu-moe 16"]))
    assert "fits" not in s
    # a word that only contains the letters is not an override
    assert "fits" in b.score(_llmfit(32, notes=["a pilot run, -otherwise default"]))
