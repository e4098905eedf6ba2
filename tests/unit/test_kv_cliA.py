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


# ---- kv's text through memory/term.py (80 columns in a pipe, as capsys is)
LLAMA_FREE = ["kv", "--model", "Llama-3.1-8B", "--weights-dtype", "awq", "--runtime", "vllm", "--ctx", "8192", "--vram",
              "15.99", "--free-gib", "13.88", "--runtime-version", "0.10.1"]


def test_kv_prose_wraps_to_80_columns_and_commands_stay_whole(capsys):
    from gpu_garden.memory import term
    from support.cli_run import flat, text
    rc, out = text(LLAMA_FREE, capsys)
    lines = out.splitlines()
    # review: kv's notes printed whole (a 231-character note here); now only table rows and commands pass 80
    assert [x for x in lines if len(x) > 80 and not term.keep(x)] == []
    assert "  vllm serve MODEL --max-model-len 8192 --kv-cache-dtype auto --gpu-memory-utilization 0.83 --enforce-eager" \
        in lines
    assert ("note: vLLM refuses to start: --gpu-memory-utilization 0.90 asks 14.39 GiB, more than the 13.38 GiB its "
            "startup check finds free (--free-gib less its own CUDA context); --gpu-memory-utilization 0.83 or less, or "
            "free memory on the GPU") in flat(out)
    # a flag keeps its value and a figure its unit across a break
    assert not [x for x in lines if x.rstrip().endswith(("--gpu-memory-utilization", "--free-gib"))]
    assert not [x for x in lines if x.split()[:1] in (["GiB"], ["MiB"], ["0.83"], ["0.90"])]


def test_the_runtime_fit_flag_is_a_line_of_its_own(capsys):
    from support.cli_run import text
    rc, out = text(["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--ctx", "131072", "--vram", "23.55"], capsys)
    lines = out.splitlines()
    i = lines.index("  or let the runtime fit itself: --max-model-len auto")  # was '... auto  (vLLM >= 0.12 ...)' whole
    assert lines[i + 1] == "    (vLLM >= 0.12 picks the largest context its own profile leaves room for)"
    assert "  or let the runtime fit itself: --kv-cache-memory 6823276193" in lines


def test_term_holds_a_flag_with_its_value_a_quoted_command_and_kv_cache_type():
    from gpu_garden.memory import term
    # at 60 columns each break below would fall inside the held pair without the holds
    assert term.wrap("note: " + "a" * 44 + " then -ngl 24 with more words after it", 60).split("\n") == [
        "note: " + "a" * 44 + " then", "  -ngl 24 with more words after it"]
    assert term.wrap("note: " + "b" * 40 + " run `ollama create NAME -f Modelfile` now", 60).split("\n") == [
        "note: " + "b" * 40 + " run", "  `ollama create NAME -f Modelfile` now"]
    assert term.wrap("runtime vllm " + "c" * 38 + ", 1 request(s), KV cache f16", 60).split("\n") == [
        "runtime vllm " + "c" * 38 + ", 1", "  request(s), KV cache f16"]


def test_unwrap_gives_back_what_kv_wrote():
    # the helper the line-pinning kv tests read through (support.cli_run.unwrap): wrapped at 60, 80 and 100 columns,
    # each plan's text comes back line for line (table rows and commands over the width included)
    from gpu_garden.memory import term
    from gpu_garden.memory.llm.report import format_plan
    from support.cli_run import unwrap
    plans = [_qwen8b_q8(ngl=99), llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), "sglang", ctx=131072,
                                          vram=24 * GiB, runtime_version="0.3.2"),
             llm.plan(llm.describe(model="Qwen/Qwen3-32B"), "vllm", ctx=4096, vram=24 * GiB, pipeline_parallel_size=2)]
    for r in plans:
        r["total_all_layers"] = r["total"]
        t = format_plan(r)
        assert max(len(x) for x in t.split("\n")) > 100  # something to wrap
        for cols in (60, 80, 100):
            assert unwrap(term.wrap(t, cols), cols) == t


def test_every_layer_on_a_model_of_more_than_98_layers_is_not_ngl_99():
    # found here: Llama-3.1-405B (126 layers) with every layer on the GPU printed -ngl 99, which llama.cpp reads as 99
    # layers (the rest in RAM), not every layer; 999 holds them all
    r = llm.plan(llm.describe(model="Llama-3.1-405B"), "llama.cpp", ctx=4096, weights_dtype="Q4_K_M")
    assert _ngl_flag(r) == ["-ngl 999"]
    assert _ngl_flag(_llama8b("llama.cpp")) == ["-ngl 99"]  # 32 layers: as before
