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


def test_a_unified_cache_keeps_the_trained_context():
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="llama.cpp", ctx=32768, parallel=4, vram=24 * GiB, runtime_version="b5913",
                 kv_unified=True)
    assert _largest(r)["q4_0"] == QWEN_MAX  # every slot may use all of -c: no slot holds more than n_ctx_train


def test_ollama_num_ctx_stays_a_slots_context(capsys):
    _, r, _ = _run(["kv", "--model", "qwen2.5:7b", "--ctx", "32768", "--parallel", "4", "--vram", "48", "--json"],
                   capsys)
    assert _largest(r)["q4_0"] == QWEN_MAX  # num_ctx is per slot: x 4 would ask 4 x the trained context a request
