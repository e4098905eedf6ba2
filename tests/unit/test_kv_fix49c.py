"""fix49c: review rev25's findings on fix49a/dfl49's `gpu-garden kv` changes. S4 the PP no-fit advice names the
heaviest stage only for a 'weights alone' verdict; S5 the PP 'KV pool' line is one stage's pool beside that stage's
tokens, named; further findings below their own comments."""
import json

from support.cli_run import json_out, text, unwrap


def _text(argv, capsys):
    """kv's text with term.py's wrapping undone (support.cli_run.unwrap): these pin whole lines."""
    rc, out = text(argv, capsys)
    return rc, unwrap(out)


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
    r = json_out(["kv", "--model", "bartowski/DeepSeek-R1-Distill-Qwen-7B-GGUF", "--runtime", "vllm"], capsys)
    assert r["command"].startswith("vllm serve bartowski/DeepSeek-R1-Distill-Qwen-7B-GGUF:Q4_K_M --max-model-len ")
    assert "--tokenizer" not in r["command"]
    note = next(n for n in r["notes"] if "is a GGUF repo" in n)
    assert "the tokenizer vLLM converts from the GGUF file" in note and "Qwen/Qwen2.5-7B-Instruct" in note
    r = json_out(["kv", "--model", "unsloth/Qwen3-8B-GGUF", "--runtime", "vllm"], capsys)
    assert r["command"].startswith("vllm serve unsloth/Qwen3-8B-GGUF:Q4_K_M --tokenizer Qwen/Qwen3-8B ")


# S2. repo:TYPE with a suffixed type: the note says which builds read it (the release is not pinned here)
def test_vllm_gguf_repo_type_note_names_the_builds(capsys):
    r = json_out(["kv", "--model", "unsloth/Qwen3-8B-GGUF", "--runtime", "vllm", "--runtime-version", "0.8.0"], capsys)
    note = next(n for n in r["notes"] if "is a GGUF repo" in n)
    assert "repo:TYPE needs a vLLM build whose GGUF docs show it" in note
    assert "on an older one download the file and give its path as MODEL" in note


# S3. -hf fetches a repo's projector from April 2025 (ggml-org/llama.cpp#12694); b4800 is before b4881 (March 2025),
# so no --no-mmproj there; b4900 keeps the flag with the note that older builds lack it. Breaks if the flag is added
# for every build (the old code) or the note is dropped.
def test_no_mmproj_by_build(capsys):
    base = ["kv", "--model", "bartowski/google_gemma-3-4b-it-GGUF", "--runtime", "llama.cpp", "--runtime-version"]
    r = json_out(base + ["b4800"], capsys)
    assert r["command"].startswith("llama-server -hf bartowski/google_gemma-3-4b-it-GGUF -c ")
    assert "--no-mmproj" not in r["command"]
    r = json_out(base + ["b4900"], capsys)
    assert r["command"].endswith(" --no-mmproj")
    assert any(n.startswith("--no-mmproj keeps -hf from loading") and "an older build lacks the flag" in n
               for n in r["notes"])


# B1. z-lab/Qwen3.6-27B-DFlash: 4 sliding layers (2048-token window) + 1 full (the public re-build's layer_types).
# vLLM before 0.24 sizes all 5 full (club-3090#46); from 0.24.0 the V2 runner gives them two KV groups, which kv's one
# drafter kind cannot hold: both the repo id and the same config as a local file are sized all full (5 layers of 4 KV
# heads a GPU at TP 2, no window), and for 0.24 and the newest the note says that is the pre-0.24 sizing. Breaks if the
# table drops layer_types (no note on 0.24), or the local file keeps its old refusal ("mixes sliding and full").
MIXED = {"architectures": ["DFlashDraftModel"], "hidden_size": 5120, "num_hidden_layers": 5, "num_attention_heads": 32,
         "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 17408, "vocab_size": 248320,
         "layer_types": ["sliding_attention"] * 4 + ["full_attention"], "sliding_window": 2048,
         "dflash_config": {"target_layer_ids": [1, 16, 31, 46, 61]}}


def test_mixed_drafter_agrees_by_repo_id_and_local_file(tmp_path, capsys):
    from gpu_garden.memory.llm.runtimes import vllm_drafter as VD
    local = tmp_path / "config.json"
    local.write_text(json.dumps(MIXED))
    for model in ("z-lab/Qwen3.6-27B-DFlash", str(local)):
        for version, later in ((None, True), ((0, 24, 0), True), ((0, 23, 1), False)):
            g = VD.read_drafter("dflash", model, version)
            assert (g["layers"], g["window"], g["mixed_as_full"]) == (5, None, (4, 2048, later))
            assert VD.drafter_for_rank(g, 2) == {"layers": 5, "kv_heads": 4, "head_dim": 128, "window": None}
    spec5 = json.dumps({"method": "dflash", "model": "z-lab/Qwen3.6-27B-DFlash", "num_speculative_tokens": 5})
    base = ["kv", "--model", "Qwen/Qwen3.6-27B", "--runtime", "vllm", "--speculative-config", spec5]
    said = "names 4 of its 5 layers sliding (2048-token window): sized every layer full, as vLLM before 0.24 does"
    newest = [n for n in json_out(base, capsys)["notes"] if said in n]
    assert len(newest) == 1 and "the drafter's KV figures here are the pre-0.24 all-full sizing" in newest[0]
    old = [n for n in json_out(base + ["--runtime-version", "0.20.1"], capsys)["notes"] if said in n]
    assert len(old) == 1 and "pre-0.24" not in old[0]
# D3. Hub repo names match case aside; the refusal for an eagle3 drafter names no DFlash repo as known. Breaks if the
# table is looked up by exact case, or NOT_LOCAL lists every PUBLISHED repo.
def test_drafter_repo_id_case_and_known_list_by_method():
    import pytest
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm.runtimes import vllm_drafter as VD
    g = VD.read_drafter("dflash", "Z-LAB/qwen3.6-27b-dflash", (0, 20, 2))
    assert g["layers"] == 5 and g["path"].startswith("z-lab/Qwen3.6-27B-DFlash, kv's table")
    with pytest.raises(UserError) as e:
        VD.read_drafter("eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
    assert "(none for method 'eagle3')" in str(e.value) and "DFlash" not in str(e.value)


# S1. Qwen3.6-27B at TP 2: its 16 full-attention layers' 4 KV heads x 256 split 2 a GPU: 16 x 2 x 256 x 2 (K, V) x
# 2 B = 32,768 B; the DFlash drafter's 5 layers x 4 KV heads (8 / 2) x 128 x 2 x 2 = 10,240 B; together
# 43,008 B = 42.00 KiB a token (was 32.00 KiB, the target alone). Breaks if kv_per_token leaves the drafter out.
def test_per_token_kv_counts_the_drafter(capsys):
    spec5 = json.dumps({"method": "dflash", "model": "z-lab/Qwen3.6-27B-DFlash", "num_speculative_tokens": 5})
    base = ["kv", "--model", "Qwen/Qwen3.6-27B", "--runtime", "vllm", "--tensor-parallel-size", "2"]
    assert json_out(base, capsys)["kv_per_token"] == 16 * 2 * 256 * 2 * 2 == 32768
    assert json_out(base + ["--speculative-config", spec5], capsys)["kv_per_token"] == 32768 + 5 * 4 * 128 * 2 * 2 == 43008
    rc, text = _text(base + ["--speculative-config", spec5], capsys)
    assert "42.00 KiB per token" in text


# D6. qwen2.5:7b on 8 GiB at 32,768 tokens: the tag given is the file sized (no model_to_run), and the plan sets
# num_ctx: the PARAMETER line comes under FROM qwen2.5:7b as a whole Modelfile, never alone. Breaks on the old code
# (a lone "  PARAMETER num_ctx 32768" line after the serve command).
def test_parameter_lines_only_in_a_whole_modelfile(capsys):
    rc, text = _text(["kv", "--model", "qwen2.5:7b", "--runtime", "ollama", "--vram", "8", "--ctx", "32768"], capsys)
    lines = text.splitlines()
    i = lines.index("  PARAMETER num_ctx 32768")
    assert lines[i - 1] == "  FROM qwen2.5:7b  (the name given)"
    assert lines[i + 1].startswith("  (the FROM and PARAMETER lines are a Modelfile: `ollama create NAME -f Modelfile`")
