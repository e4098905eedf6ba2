"""Task fix66b: audit aud66a's `gpu-garden kv` findings for llama.cpp (issue 15), each expected value from llama.cpp's
source or the model's config.json (Qwen2.5-7B-Instruct: max_position_embeddings 32768, no rope_scaling).

F1: src/llama-context.cpp gives each sequence n_ctx_seq = n_ctx / n_seq_max without a unified cache (n_ctx with one),
and llama-server caps a slot at n_ctx_train: the longest -c worth asking for is n_ctx_train x -np when slots split -c,
n_ctx_train when they share it. Ollama's num_ctx is a slot's own (it starts llama.cpp with -c num_ctx x parallel)."""
from gpu_garden.memory.llm import kv as llm
from support.cli_run import run as _run

GiB = 1 << 30
QWEN_MAX = 32768  # Qwen2.5-7B-Instruct config.json max_position_embeddings
QWEN_LC = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--runtime", "llama.cpp"]


def _largest(r):
    return r["max_ctx_by_kv_dtype"]


# F1: the largest -c with split slots is the trained context times -np

def test_split_slots_raise_the_largest_c_to_trained_times_slots(capsys):
    _, r, _ = _run(QWEN_LC + ["--ctx", "131072", "--parallel", "4", "--vram", "24", "--json"], capsys)
    assert _largest(r)["q4_0"] == 4 * QWEN_MAX  # was 32768: each slot then held 8192
    assert _largest(r)["f16"] == 4 * QWEN_MAX  # 131072 cells of f16 fit 24 GiB (the plan's own total, 21.84 GiB)
    _, one, _ = _run(QWEN_LC + ["--ctx", "32768", "--vram", "24", "--json"], capsys)
    assert _largest(one)["q4_0"] == QWEN_MAX  # one slot: the trained context


def test_builds_before_the_split_streams_split_c_too(capsys):
    # before b5913 llama-server gave each slot n_ctx / n_parallel (server.cpp init)
    _, r, _ = _run(QWEN_LC + ["--ctx", "32768", "--parallel", "4", "--runtime-version", "b5000", "--vram", "24",
                              "--json"], capsys)
    assert _largest(r)["q4_0"] == 4 * QWEN_MAX


def test_a_unified_pool_goes_to_the_trained_context_for_every_slot():
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="llama.cpp", ctx=32768, parallel=4, vram=24 * GiB, runtime_version="b5913",
                 kv_unified=True)
    # every slot may use all of -c but no slot holds more than n_ctx_train: -np 4 slots at full length fill 4 x the
    # trained context together (the lead's mend after fix66b, which capped a unified pool at one slot's)
    assert _largest(r)["q4_0"] == 4 * QWEN_MAX


def test_ollama_num_ctx_stays_a_slots_context(capsys):
    _, r, _ = _run(["kv", "--model", "qwen2.5:7b", "--ctx", "32768", "--parallel", "4", "--vram", "48", "--json"],
                   capsys)
    assert _largest(r)["q4_0"] == QWEN_MAX  # num_ctx is per slot: x 4 would ask 4 x the trained context a request


# F6: llama-server caps a slot at n_ctx_train (server-context.cpp load_model, "the slot context (N) exceeds the training
# context of the model (M) - capping", from ggml-org/llama.cpp#16736, b6925-cd5e3b575) while llama_context allocates
# the cache for all of -c; the library (llama_context) only warns "possible training context overflow" and runs it

def _notes(capsys, *args):
    _, r, _ = _run(QWEN_LC + ["--weights-dtype", "Q4_K_M", "--vram", "24", "--json"] + list(args), capsys)
    return " | ".join(r["notes"])


def test_llama_server_caps_a_slot_past_the_trained_context(capsys):
    n = _notes(capsys, "--ctx", "65536")
    assert "llama-server caps each slot at 32,768 tokens" in n and "capping" in n
    assert "its 32,768 cells past the cap is allocated but unusable" in n and "-c 32768 holds as much" in n
    assert "and runs it" not in n  # the server does not run the slot past the trained context


def test_split_slots_past_the_cap_waste_each_slots_surplus(capsys):
    n = _notes(capsys, "--ctx", "262144", "--parallel", "4")  # 65536 a slot, 32768 of it usable, x 4
    assert "its 131,072 cells past the cap" in n and "-c 131072 holds as much" in n
    assert "each slot holds at most 32768 tokens" in n  # not 65536: the cap


def test_the_library_and_older_servers_warn_and_run(capsys):
    lib = _notes(capsys, "--ctx", "65536", "--llamacpp-entrypoint", "library")
    assert "llama.cpp's library (llama_context) warns of a possible training context overflow" in lib
    assert "and runs it" in lib and "caps each slot" not in lib
    old = _notes(capsys, "--ctx", "65536", "--runtime-version", "b6924")
    assert "llama-server before b6925 warns" in old and "and runs it" in old
    assert "caps each slot" in _notes(capsys, "--ctx", "65536", "--runtime-version", "b6925")


def test_kvu_hint_names_the_cap(capsys):
    n = _notes(capsys, "--ctx", "65536", "--parallel", "4")  # 16384 a slot; -kvu: one slot up to the trained 32768
    assert "each slot holds at most 16384 tokens (-kvu lets one slot use up to 32768)" in n
    n = _notes(capsys, "--ctx", "131072", "--parallel", "4")  # 32768 a slot already: -kvu lengthens none
    assert "each slot holds at most 32768 tokens" in n and "-kvu" not in n


def test_a_unified_pool_past_the_cap_serves_the_slots_together():
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="llama.cpp", ctx=131072, parallel=4, vram=24 * GiB, weights_dtype="Q4_K_M",
                 kv_unified=True)
    n = " | ".join(r["notes"])
    assert "any slot may use up to 32768, the trained context" in n
    assert "caps each slot at 32,768" in n and "the 4 slots together can still fill the -c 131072 cache" in n
    assert "unusable" not in n


# F5 (issue 15: 'a "largest context" line that says when it assumes partial offload'): the plan moves layers to the
# CPU, and the largest-context figures assume every layer on the GPU; the line says so and the plan's count follows

LLAMA_LC = ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--weights-dtype", "Q4_K_M", "--ctx", "65536"]


def test_largest_context_says_it_assumes_every_layer_when_the_plan_offloads(capsys):
    _, r, _ = _run(LLAMA_LC + ["--runtime", "llama.cpp", "--vram", "6", "--json"], capsys)
    ngl = r["gpu_layers_used"]
    assert ngl is not None and ngl < 32 and r["max_ctx_plan_ngl"] == ngl  # the audit's run: -ngl 16
    at = r["max_ctx_at_plan_layers"]
    # the plan itself runs 65536 tokens of q8_0 at that count: its own largest is at least that, and far above the
    # every-layer figure (512 tokens of f16 at 6 GiB)
    assert r["chosen"]["kv_dtype"] == "q8_0" and at["q8_0"] >= 65536
    assert at["f16"] > 8 * r["max_ctx_by_kv_dtype"]["f16"]
    _, text, _ = _run(LLAMA_LC + ["--runtime", "llama.cpp", "--vram", "6"], capsys)
    flat = " ".join(text.split())
    assert "largest context (-c) with every layer on the GPU: f16 " in flat
    assert (f"at the plan's -ngl {ngl} (the output layer and {ngl - 1} of 32 repeating layers on the GPU): "
            f"f16 {at['f16']:,}, q8_0 {at['q8_0']:,}") in flat


def test_ollama_largest_context_says_it_too(capsys):
    _, text, _ = _run(LLAMA_LC + ["--runtime", "ollama", "--vram", "6"], capsys)
    flat = " ".join(text.split())
    assert "largest context (num_ctx) with every layer on the GPU: " in flat and "at the plan's num_gpu " in flat


def test_largest_context_at_the_users_ngl_says_so(capsys):
    _, text, _ = _run(LLAMA_LC + ["--runtime", "llama.cpp", "--vram", "6", "--ngl", "10"], capsys)
    assert "largest context (-c) at -ngl 10 as asked: " in text


def test_largest_context_without_offload_is_unlabelled(capsys):
    _, text, _ = _run(LLAMA_LC + ["--runtime", "llama.cpp", "--vram", "24"], capsys)
    assert "largest context (-c): f16 " in text and "at the plan's" not in text
