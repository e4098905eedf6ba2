"""fix67j: review rev67f's findings on fix67e's kv names (F5-F7) and vLLM's --kv-cache-memory gate (F9)."""
from support.cli_run import json_out, text, unwrap


def _text(argv, capsys):
    rc, out = text(argv, capsys)
    return rc, " ".join(unwrap(out).split())


# F5. phi4-reasoning:14b --runtime vllm --weights-dtype Q4_K_M sizes a plain Q4_K_M file (8.42 GiB, attn_qkv Q5_K), yet
# the note said "the figures above are for the tag's Q4_K_M build" (10.34 GiB); with q4_K_M in lower case it said
# "(--weights-dtype)" (rev67f repros/R_F8_tag_build_note.txt). --weights-dtype always names plain weights.
def test_weights_dtype_note_names_plain_weights_whatever_the_case(capsys):
    base = ["kv", "--model", "phi4-reasoning:14b", "--runtime", "vllm", "--vram", "24", "--ctx", "8192"]
    for given in ("Q4_K_M", "q4_K_M"):
        rc, out = _text(base + ["--weights-dtype", given], capsys)
        assert f"the figures above are for {given} weights (--weights-dtype)" in out
        assert "the tag's Q4_K_M build" not in out
    rc, out = _text(base, capsys)
    assert "the figures above are for the tag's Q4_K_M build" in out and "QKV16" not in out


# F6. kv's own names were still printed: SGLang's "the tag's Q4_K_M_QKV16 build", llama.cpp's "sized as
# Q4_K_M_MISTRAL3 (the checkpoint's), a type no GGUF file holds" (wrong too: the library build is a GGUF), and --json
# weights_dtype "MXFP4_EXPERTS_F16" for gpt-oss given F16 (rev67f repros/R_F8_leaks_left.txt).
def test_internal_names_not_printed(capsys):
    for model in ("phi4-reasoning:14b", "mistral-small3.1:24b"):
        for runtime in ("sglang", "llama.cpp"):
            rc, out = _text(["kv", "--model", model, "--runtime", runtime, "--vram", "24", "--ctx", "8192"], capsys)
            assert "QKV16" not in out and "MISTRAL3" not in out and "a type no GGUF file holds" not in out
            if runtime == "sglang":
                assert "the figures above are for the tag's Q4_K_M build" in out
    argv = ["kv", "--model", "openai/gpt-oss-20b", "--runtime", "llama.cpp", "--weights-dtype", "F16", "--vram", "24",
            "--ctx", "8192"]
    r = json_out(argv, capsys)
    assert r["weights_dtype"] == "F16" and "MXFP4_EXPERTS" not in str(r)
    from gpu_garden.memory.llm.weights import shown_type
    assert shown_type("MXFP4_EXPERTS_BF16") == "BF16" and shown_type("mxfp4") == "mxfp4"


# F7. The tag's note was rewritten by a regex built from kv's internal name (Q4_K_M_QKV16), which the note never
# prints: phi4-reasoning:14b / mistral-small3.1:24b --weights-dtype q8_0 kept "the library's default build, Q4_K_M"
# with nothing saying the figures are q8_0's (rev67f repros/R_F8_weights_dtype_note.txt); qwen2.5:7b was rewritten.
def test_weights_dtype_rewrites_the_library_build_note(capsys):
    for model in ("qwen2.5:7b", "phi4-reasoning:14b", "mistral-small3.1:24b"):
        rc, out = _text(["kv", "--model", model, "--weights-dtype", "q8_0", "--vram", "24", "--ctx", "8192"], capsys)
        assert (f"Ollama tag '{model}': weights sized as q8_0 (--weights-dtype), not as the library's default build, "
                "Q4_K_M") in out


# F9. --runtime-version 0.9.2 --kv-cache-memory 6 printed "vllm serve ... --kv-cache-memory 6442450944", a flag vLLM
# gained in 0.10.1 (runtimes/vllm.py KV_CACHE_MEMORY, kv's own gate for its suggestion; rev67f
# repros/R_F10_old_version_flag.txt): refused there, taken from 0.10.1.
def test_kv_cache_memory_refused_before_0_10_1(capsys):
    from support.cli_run import run
    base = ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", "vllm", "--gpu-name", "RTX4090",
            "--kv-cache-memory", "6", "--runtime-version"]
    rc, out, err = run(base + ["0.9.2"], capsys)
    assert rc != 0 and "--kv-cache-memory is accepted from vLLM 0.10.1" in err and "vllm serve" not in out
    rc, out, err = run(base + ["0.10.1"], capsys)
    assert rc in (0, 1) and "--kv-cache-memory 6442450944" in out
