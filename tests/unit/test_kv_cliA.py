"""cliA: kv's flag echo (a user's -ngl / num_gpu above the model's layers printed as given, kv's own every-layer
choice as -ngl 99), the user's -ngl note naming both what it tried and what fits, and kv's prose wrapped to the
terminal (memory/term.py) with commands and figures whole."""
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _llama8b(runtime, **kw):
    # Llama-3.1-8B: 32 repeating layers; Q4_K_M (about 4.6 GiB) fits 24 GiB with every layer at 8192 tokens
    return llm.plan(llm.describe(model="Llama-3.1-8B"), runtime, ctx=8192, weights_dtype="Q4_K_M", **kw)


def _ngl_flag(r):
    return [f["text"] for f in r["flags"] if f["name"] in ("-ngl", "num_gpu")]


def test_users_ngl_above_the_layers_is_printed_as_given():
    # review: the user's -ngl 33 on 32 layers was printed -ngl 99 (all_on covered the user's value too); kv's own
    # every-layer choice evaluates ngl = 33 as well (32 + the output) and must still print -ngl 99
    assert _ngl_flag(_llama8b("llama.cpp", vram=24 * GiB, ngl=33)) == ["-ngl 33"]
    assert _ngl_flag(_llama8b("llama.cpp", vram=24 * GiB, ngl=40)) == ["-ngl 40"]
    assert _ngl_flag(_llama8b("llama.cpp", vram=24 * GiB)) == ["-ngl 99"]
    assert _ngl_flag(_llama8b("llama.cpp", vram=24 * GiB, ngl="all")) == ["-ngl 99"]  # every layer, no count typed


def test_users_ngl_is_printed_as_given_without_vram():
    # the sizes-only command (no --vram) reads s["ngl"], not the evaluated count
    assert _ngl_flag(_llama8b("llama.cpp", ngl=33)) == ["-ngl 33"]
    assert _ngl_flag(_llama8b("llama.cpp")) == ["-ngl 99"]


def test_users_num_gpu_above_the_layers_is_printed_as_given():
    # Ollama: num_gpu 33 was dropped from the Modelfile (all_on prints no num_gpu); with none given none is printed
    assert _ngl_flag(_llama8b("ollama", vram=24 * GiB, ngl=33)) == ["PARAMETER num_gpu 33"]
    assert _ngl_flag(_llama8b("ollama", vram=24 * GiB)) == []
    assert _ngl_flag(_llama8b("ollama", vram=24 * GiB, ngl=12)) == ["PARAMETER num_gpu 12"]


def _qwen8b_q8(**kw):
    # Qwen3-8B Q8_0 (8.11 GiB of weights, 36 layers) with 40,960 cells on 8 GiB: not every layer fits (kv55's case)
    return llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "llama.cpp", ctx=40960, vram=8 * GiB, weights_dtype="Q8_0", **kw)


def test_users_ngl_note_names_the_cache_type_on_both_sides():
    # review: "every layer on the GPU does not fit 8.00 GiB; -ngl 24 does (..., KV cache q8_0)" named the cache type
    # that changed only in a trailing parenthesis; now each half says its own, and what the user's count was tried at
    r = _qwen8b_q8(ngl=99)
    head, tail = r["no_fit_reason"].split("; ", 1)
    assert head == "-ngl 99 (every layer on the GPU) does not fit 8.00 GiB with the KV cache at f16, q8_0 or q4_0"
    n = int(tail.split()[1])
    assert tail.startswith(f"-ngl {n} with the KV cache at q8_0 does (the output layer and {n - 1} of 36 repeating ")
    assert r["no_fit_reason"] in r["notes"] and not r["fits"] and r["command"] == ""
    # what the note names holds: that count at q8_0 fits as asked, one layer more does not (at q8_0 or narrower, the
    # search's own answer for -ngl n+1 is then another context)
    assert _qwen8b_q8(ngl=n, kv_dtype="q8_0")["fits_as_requested"]
    assert not _qwen8b_q8(ngl=n + 1, kv_dtype="q8_0")["fits_as_requested"]
    # the user's q8_0: the ladder tried starts there
    assert _qwen8b_q8(ngl=99, kv_dtype="q8_0")["no_fit_reason"].startswith(
        "-ngl 99 (every layer on the GPU) does not fit 8.00 GiB with the KV cache at q8_0 or q4_0; ")
