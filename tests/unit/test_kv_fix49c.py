"""fix49c: review rev25's findings on fix49a/dfl49's `gpu-garden kv` changes. S4 the PP no-fit advice names the
heaviest stage only for a 'weights alone' verdict; S5 the PP 'KV pool' line is one stage's pool beside that stage's
tokens, named; further findings below their own comments."""
import json

from gpu_garden.memory import cli


def _text(argv, capsys):
    rc = cli.main(argv)
    return rc, capsys.readouterr().out


def _json(argv, capsys):
    cli.main(argv + ["--json"])
    return json.loads(capsys.readouterr().out)


# S4. Gemma-3-1B at 14,12 (weights worked out in test_kv_fix49a B1): stage 0 1.29 GiB, stage 1 (12 layers + the head)
# 2 x (322,109,184 + 301,989,888 + 1152) + 32 MiB = 1,281,754,880 B = 1.19 GiB. On 1.6 GiB the share is
# 0.92 x 1.6 = 1.47 GiB: both stages' weights pass it, so the verdict is stage 1's weights with its activations, and the
# advice must name stage 1's 1.19 GiB, not stage 0's 1.29 GiB. Breaks if _no_fit takes the heaviest stage always.
def test_pp_advice_names_the_deciding_stage_unless_weights_alone(capsys):
    rc, text = _text(["kv", "--model", "google/gemma-3-1b-it", "--pipeline-parallel-size", "2", "--pp-layer-partition",
                      "14,12", "--vram", "1.6", "--ctx", "4096"], capsys)
    assert rc == 1
    assert "does NOT fit: weights + profile activations, workspaces" in text
    assert ("Weights (1.19 GiB on the deciding pipeline stage: stage 1 of 2, 12 layers + the head) with the profile's "
            "activations and workspaces leave no room for a 256-token cache in 1.60 GiB") in text
    assert "1.29 GiB on the pipeline stage" not in text


# S5. Qwen3-32B at 20,44, fp8 KV: stage 1 holds 44 layers x 8 KV heads x 128 x 2 (K, V) x 1 B = 90,112 B a token. Its
# pool 2,914,081,758 B (--kv-cache-memory's figure, printed as the suggestion) / 90,112 = 32,338.4 tokens, 32,336 in
# whole blocks of 16 = the tokens vLLM prints; 2,914,081,758 B = 2.71 GiB. Rank 0's pool (25.56 GiB) beside them was
# another stage's figure. Breaks if the line prints kv_capacity_bytes under PP.
def test_pp_pool_line_is_the_stage_of_the_printed_tokens(capsys):
    rc, text = _text(["kv", "--model", "Qwen/Qwen3-32B", "--runtime", "vllm", "--runtime-version", "0.13.0",
                      "--pipeline-parallel-size", "2", "--pp-layer-partition", "20,44", "--vram", "48", "--ctx", "22016",
                      "--kv-dtype", "fp8", "--gpu-memory-utilization", "0.95"], capsys)
    assert rc == 0
    assert ("KV pool 2.71 GiB on stage 1 of 2, 44 layers + the head (the fewest tokens): vLLM would print "
            "\"GPU KV cache size: 32,336 tokens;") in text
    assert "KV pool 25.56 GiB" not in text


# B2. vLLM's GGUF docs advise the model's own tokenizer; the built-in's source repo is that only where the GGUF repo's
# name is the model itself: unsloth/Qwen3-8B-GGUF less "GGUF" is Qwen3-8B (Qwen/Qwen3-8B); the DeepSeek distill was
# sized on Qwen2.5-7B's geometry (Qwen/Qwen2.5-7B-Instruct), another tokenizer. Breaks if --tokenizer is the source repo
# for any GGUF repo (the old code), or never.
def test_vllm_gguf_tokenizer_only_for_the_models_own_repo(capsys):
    r = _json(["kv", "--model", "bartowski/DeepSeek-R1-Distill-Qwen-7B-GGUF", "--runtime", "vllm"], capsys)
    assert r["command"].startswith("vllm serve bartowski/DeepSeek-R1-Distill-Qwen-7B-GGUF:Q4_K_M --max-model-len ")
    assert "--tokenizer" not in r["command"]
    note = next(n for n in r["notes"] if "is a GGUF repo" in n)
    assert "the tokenizer vLLM converts from the GGUF file" in note and "Qwen/Qwen2.5-7B-Instruct" in note
    r = _json(["kv", "--model", "unsloth/Qwen3-8B-GGUF", "--runtime", "vllm"], capsys)
    assert r["command"].startswith("vllm serve unsloth/Qwen3-8B-GGUF:Q4_K_M --tokenizer Qwen/Qwen3-8B ")


# S2. repo:TYPE with a suffixed type: the note says which builds read it (the release is not pinned here)
def test_vllm_gguf_repo_type_note_names_the_builds(capsys):
    r = _json(["kv", "--model", "unsloth/Qwen3-8B-GGUF", "--runtime", "vllm", "--runtime-version", "0.8.0"], capsys)
    note = next(n for n in r["notes"] if "is a GGUF repo" in n)
    assert "repo:TYPE needs a vLLM build whose GGUF docs show it" in note
    assert "on an older one download the file and give its path as MODEL" in note


# S3. -hf fetches a repo's projector from April 2025 (ggml-org/llama.cpp#12694); b4800 is before b4881 (March 2025),
# so no --no-mmproj there; b4900 keeps the flag with the note that older builds lack it. Breaks if the flag is added
# for every build (the old code) or the note is dropped.
def test_no_mmproj_by_build(capsys):
    base = ["kv", "--model", "bartowski/google_gemma-3-4b-it-GGUF", "--runtime", "llama.cpp", "--runtime-version"]
    r = _json(base + ["b4800"], capsys)
    assert r["command"].startswith("llama-server -hf bartowski/google_gemma-3-4b-it-GGUF -c ")
    assert "--no-mmproj" not in r["command"]
    r = _json(base + ["b4900"], capsys)
    assert r["command"].endswith(" --no-mmproj")
    assert any(n.startswith("--no-mmproj keeps -hf from loading") and "an older build lacks the flag" in n
               for n in r["notes"])
