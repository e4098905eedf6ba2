"""Task fix66e: review rev66a's `gpu-garden kv` findings on llama.cpp's slots (issue 15), each expected value from
llama.cpp's source or the model's config.json (Qwen2.5-7B-Instruct: max_position_embeddings 32768, no rope_scaling;
Llama-3.1-8B-Instruct: 32 layers)."""
from support.cli_run import flat, run as _run

QWEN_LC = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M"]
LLAMA_LC = ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--weights-dtype", "Q4_K_M", "--ctx", "65536"]


# item 4 (rev66a R11): --ngl 0 kept the largest-context line unlabelled (0 read as no count)

def test_largest_context_at_ngl_0_says_as_asked(capsys):
    _, text, _ = _run(LLAMA_LC + ["--runtime", "llama.cpp", "--vram", "6", "--ngl", "0"], capsys)
    assert "largest context (-c) at -ngl 0 as asked: " in text
    _, r, _ = _run(LLAMA_LC + ["--runtime", "llama.cpp", "--vram", "6", "--ngl", "0", "--json"], capsys)
    assert r["ngl_as_asked"] is True and r["gpu_layers_used"] == 0


def test_ollama_num_gpu_0_says_as_asked_too(capsys):
    _, text, _ = _run(LLAMA_LC + ["--runtime", "ollama", "--vram", "6", "--ngl", "0"], capsys)
    assert "largest context (num_ctx) at num_gpu 0 as asked: " in text


# item 2 (rev66a R2): llama-server gave each slot n_ctx / n_parallel (server.cpp init) whatever -kvu said until
# ggml-org/llama.cpp#16736 (b6925: -np "no longer used to change the per-slot context"); llama_context's n_ctx_seq is
# all of -c with kv_unified from b5913, which the library (--llamacpp-entrypoint library) runs

def _notes(capsys, *args):
    _, r, _ = _run(QWEN_LC + ["--vram", "24", "--json"] + list(args), capsys)
    return " | ".join(r["notes"])


def test_no_kvu_hint_for_a_server_before_b6925(capsys):
    n = _notes(capsys, "--ctx", "65536", "--parallel", "4", "--runtime-version", "b6000")
    assert "each slot holds at most 16384 tokens" in n  # 65536 / 4
    assert "-kvu lets" not in n  # -kvu kept each slot at 16384 on this server


def test_the_library_from_b5913_and_the_server_from_b6925_get_the_hint(capsys):
    lib = _notes(capsys, "--ctx", "65536", "--parallel", "4", "--runtime-version", "b6000", "--llamacpp-entrypoint",
                 "library")
    assert "each slot holds at most 16384 tokens (-kvu lets one slot use all of it)" in lib  # the library: no cap
    srv = _notes(capsys, "--ctx", "65536", "--parallel", "4", "--runtime-version", "b6925")
    assert "each slot holds at most 16384 tokens (-kvu lets one slot use up to 32768)" in srv  # capped at trained


def test_a_unified_server_cache_before_b6925_still_splits_c():
    from gpu_garden.memory.llm import kv as llm
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="llama.cpp", ctx=262144, parallel=4, vram=80 << 30, weights_dtype="Q4_K_M",
                 runtime_version="b6000", kv_unified=True)
    n = " | ".join(r["notes"])
    assert "one cache, each slot at most 65536 tokens (n_ctx_slot, llama-server before b6925, -kvu or not)" in n
    assert "any slot may use it all" not in n
    # the slot past the trained context is -c / -np = 65536 tokens, not all of -c (262144)
    assert "65536 tokens a slot is above the model's trained context (32,768): llama-server before b6925 warns" in n
    lib = llm.plan(spec, runtime="llama.cpp", ctx=262144, parallel=4, vram=80 << 30, weights_dtype="Q4_K_M",
                   runtime_version="b6000", kv_unified=True, llamacpp_entrypoint="library")
    n = " | ".join(lib["notes"])
    assert "unified cache: any slot may use it all" in n and "262144 tokens a slot is above" in n


# item 3 (rev66a R8): docs/kv.md said a shared cache's largest -c goes to the trained context; the code (ad6b57a6)
# gives the trained context x -np, split or shared

def _doc_largest_sentence():
    from pathlib import Path
    doc = " ".join((Path(__file__).resolve().parents[2] / "docs" / "kv.md").read_text(encoding="utf-8").split())
    start = doc.index("The *largest context* line goes up to the trained context")
    return doc[start:doc.index(". ", start) + 1]


def test_docs_largest_context_matches_the_code_for_a_shared_cache():
    from gpu_garden.memory.llm import kv as llm
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    common = dict(runtime="llama.cpp", ctx=32768, parallel=4, vram=24 << 30, weights_dtype="Q4_K_M")
    shared = llm.plan(spec, **common, kv_unified=True)["max_ctx_by_kv_dtype"]["q4_0"]
    split = llm.plan(spec, **common)["max_ctx_by_kv_dtype"]["q4_0"]
    assert shared == split == 4 * 32768  # max_position_embeddings 32768 x -np 4
    s = _doc_largest_sentence()
    assert "times `-np`, split or shared" in s and "to the trained context when they share" not in s


# item 1 (rev66a R1): from ggml-org/llama.cpp#16736 (b6925) llama-server given no -np starts 4 slots over one unified
# cache ("setting n_parallel = 4 and kv_unified = true"), keyed on n_parallel == 1 && !kv_unified, so -np 1 alone got 4
# slots too (#17300, b7079) until #17997 (b7433: -np defaults to -1, auto). The plan is one slot: the command says so.

def _plan(capsys, *args):
    _, r, _ = _run(QWEN_LC + ["--vram", "24", "--json"] + list(args), capsys)
    return r


def test_the_command_names_np_1_from_b6925(capsys):
    r = _plan(capsys, "--ctx", "65536")
    assert r["command"].startswith("llama-server -m MODEL.gguf -c 65536 -np 1 -ngl 99")
    assert "-kvu" not in r["command"]  # b7433 on: -np 1 given is one slot
    n = " | ".join(r["notes"])
    assert "-np 1 in the command: without -np, llama-server (from b6925) starts 4 slots sharing the -c 65536 cache" in n
    # the notes and the largest context describe that one slot: capped at the trained 32768, the rest unusable
    assert "its 32,768 cells past the cap is allocated but unusable" in n and "-c 32768 holds as much" in n
    assert r["max_ctx_by_kv_dtype"]["q4_0"] == 32768


def test_np_1_takes_kvu_on_b6925_to_b7432(capsys):
    for v in ("b6925", "b7432"):
        r = _plan(capsys, "--ctx", "32768", "--runtime-version", v)
        assert " -c 32768 -np 1 -kvu -ngl 99 " in r["command"], v
        assert "-np 1 -kvu in the command" in " | ".join(r["notes"])
    r = _plan(capsys, "--ctx", "32768", "--runtime-version", "b7433")
    assert " -c 32768 -np 1 -ngl 99 " in r["command"]


def test_no_np_before_b6925_and_once_for_several_slots(capsys):
    r = _plan(capsys, "--ctx", "32768", "--runtime-version", "b6924")
    assert "-np" not in r["command"] and "-np 1" not in " | ".join(r["notes"])  # one slot without it there
    r = _plan(capsys, "--ctx", "65536", "--parallel", "4")
    assert r["command"].count("-np") == 1 and " -np 4 " in r["command"]
    assert "-np 1" not in " | ".join(r["notes"])


def test_the_printed_text_carries_np(capsys):
    _, text, _ = _run(QWEN_LC + ["--vram", "24", "--ctx", "65536"], capsys)
    assert "  llama-server -m MODEL.gguf -c 65536 -np 1 -ngl 99 -fa on" in text
    assert "starts 4 slots sharing the -c 65536 cache" in flat(text)
