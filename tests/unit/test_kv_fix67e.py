"""fix67e: audit aud67a's kv findings. F8: kv's own name for an Ollama library build (Q4_K_M_MISTRAL3, Q4_K_M_QKV16,
weights.LIBRARY_VARIANTS) is a name kv refuses as input, so it is never printed: text and JSON name the file type
(Q4_K_M) and the tag's note says why the build's size differs."""
from support.cli_run import json_out, text, unwrap


def _text(argv, capsys):
    rc, out = text(argv, capsys)
    return rc, unwrap(out)


# F8. mistral-small3.1:24b printed "x 4.80 bits (Q4_K_M_MISTRAL3)" and weights_dtype / model.quant Q4_K_M_MISTRAL3
def test_library_build_name_not_printed(capsys):
    argv = ["kv", "--model", "mistral-small3.1:24b", "--vram", "12", "--ctx", "8192"]
    rc, out = _text(argv, capsys)
    assert "MISTRAL3" not in out
    assert "22.23 B block params x 4.80 bits (Q4_K_M) + embedding Q6_K + output Q4_K" in out
    assert "its output tensor keeps the base type" in out  # the note why the build differs from a plain Q4_K_M
    r = json_out(argv, capsys)
    assert (r["weights_dtype"], r["model"]["quant"]) == ("Q4_K_M", "Q4_K_M")
    assert "MISTRAL3" not in str(r)
    r = json_out(["kv", "--model", "phi4-reasoning:14b", "--vram", "12", "--ctx", "8192"], capsys)
    assert (r["weights_dtype"], r["model"]["quant"]) == ("Q4_K_M", "Q4_K_M")
    assert "QKV16" not in str(r) and any("fused attn_qkv kept in F16" in n for n in r["notes"])


# F12. kv --help said --runtime-version defaults to "the newest"; for Ollama no version is its own engine, 0.29's
# (report.py's runtime line, docs/kv.md "With no --runtime-version")
def test_runtime_version_help_says_what_no_version_means(capsys):
    import pytest
    from gpu_garden.memory.cli import main
    with pytest.raises(SystemExit):
        main(["kv", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "default: the newest" not in out
    assert ("none given: vLLM, SGLang and llama.cpp as the newest release kv models; Ollama as its own engine (0.29's "
            "and earlier: 0.30 or later runs llama-server, give that version to size it)") in out
    rc, text_out = _text(["kv", "--model", "qwen2.5:7b", "--vram", "24", "--ctx", "8192"], capsys)
    assert "no version: sized as Ollama's own engine, 0.29's" in text_out


# F10. Llama-3.1-8B on vLLM 0.12.0, RTX 4090 (23.55 GiB), no context given (131,072): does not fit; the command's
# --max-model-len is 100,352 with an fp8 cache. Llama-3.1-8B's KV a token: 32 layers x 8 KV heads x 128 x 2 (k, v) x
# 1 byte (fp8) = 65,536 B; 100,352 x 65,536 = 6,576,668,672 B. The suggestion was the default share's pool,
# 5,325,515,327 B (4.96 GiB: 40,630 f16 / 81,260 fp8 tokens), below both.
def test_kv_cache_memory_suggestion_is_the_commands_pool(capsys):
    argv = ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", "vllm", "--runtime-version", "0.12.0",
            "--gpu-name", "RTX 4090"]
    r = json_out(argv, capsys)
    assert not r["fits"] and "--max-model-len 100352 --kv-cache-dtype fp8" in r["command"]
    pools = [a["flag"] for a in r["autofit"] if a["flag"].startswith("--kv-cache-memory")]
    assert pools == ["--kv-cache-memory 6576668672"]
    rc, out = _text(argv, capsys)
    assert "--kv-cache-memory 5325515327" not in out and "--kv-cache-memory 6576668672" in out
