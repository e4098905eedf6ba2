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
