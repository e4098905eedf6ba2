"""fix68e: audit aud68b's findings on `gpu-garden kv` (issue 15 item 6); each test failed on the code before its fix."""
from support.cli_run import flat, json_out, run, unwrap

GIB = 2**30


def _weights(model, runtime="llama.cpp"):
    from gpu_garden.memory.llm.kv import plan
    from gpu_garden.memory.llm.names import load_builtin
    return plan(load_builtin(model), runtime=runtime, ctx=8192, vram=80 * GIB)["weights"] / GIB


# 1. A gpt-oss GGUF named by its repo and tag was sized as if its experts were re-quantized: the tag's type replaced
# the checkpoint's "mxfp4" (names.load_builtin), so the BF16 file of gpt-oss-120b came to 217.54 GiB. llama.cpp#15125
# loads unsloth's gpt-oss-120b BF16 file at "60.87 GiB (4.48 BPW)" (its 108 experts tensors MXFP4); weights.py's notes:
# unsloth's gpt-oss-20b F16 file 12.83 GiB, its Q4_K_M 10.81 GiB. ggml-org's repo holds one file, MXFP4 MoE.
def test_gpt_oss_gguf_tag_keeps_the_checkpoint_mxfp4_experts():
    from gpu_garden.memory.llm.names import load_builtin
    assert abs(_weights("unsloth/gpt-oss-120b-GGUF:BF16") / 60.87 - 1) < 0.03
    for runtime in ("llama.cpp", "ollama"):
        assert abs(_weights("hf.co/unsloth/gpt-oss-20b-GGUF:F16", runtime) / 12.83 - 1) < 0.03
    assert abs(_weights("unsloth/gpt-oss-20b-GGUF:Q4_K_M") / 10.81 - 1) < 0.03
    assert _weights("unsloth/gpt-oss-120b-GGUF:Q4_K_M") < 60.87  # was 81.12: Q4_K_M experts and their fallback rows
    spec = load_builtin("unsloth/gpt-oss-120b-GGUF:BF16")
    assert spec.quant == "BF16" and spec.checkpoint_quant == "mxfp4"  # the checkpoint's method kept in its own field
    spec = load_builtin("hf.co/ggml-org/gpt-oss-20b-GGUF")
    assert spec.quant == "MXFP4_MOE" and "ggml-org's gpt-oss GGUF holds one file" in " ".join(spec.notes)


# 2. A quantized V cache with --flash-attn off was sized as if flash attention were on ("fits", rc 0): llama.cpp's
# llama_init_from_model returns no context for ggml_is_quantized(type_v) with LLAMA_FLASH_ATTN_TYPE_DISABLED ("quantized
# V cache requires flash_attn to be enabled"; builds before llama.cpp#25871: "V cache quantization requires flash_attn").
def test_quantized_v_cache_with_flash_attention_off_refused(capsys):
    base = ["kv", "--model", "Qwen3-8B", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "32768",
            "--vram", "12", "--kv-dtype", "q8_0"]
    rc, out, err = run(base + ["--flash-attn", "off"], capsys)
    assert rc == 1 and "fits" not in out and "quantized V cache requires flash_attn to be enabled" in flat(err)
    rc, out, err = run(base + ["--flash-attn", "off", "--runtime-version", "b5000"], capsys)
    assert rc == 1 and "V cache quantization requires flash_attn" in flat(err)
    rc, out, err = run(base + ["--flash-attn", "off", "--kv-dtype-v", "f16"], capsys)  # a quantized K alone runs
    assert rc == 0 and "fits" in out
    for given in ([], ["--flash-attn", "auto"], ["--runtime-version", "b5000"]):  # -fa auto / kv's own -fa: switched on
        rc, out, err = run(base + given, capsys)
        assert rc == 0 and "fits" in out and "-fa" in out


# 3. google/gemma-3-27b-it-qat-q4_0-gguf was read as Q4_K_M (gguf_repo's default for a repo named without a tag) and
# the command named ':Q4_K_M', a file that repo lacks (it holds gemma-3-27b-it-q4_0.gguf). Its QAT Q4_0 file is Q4_0
# blocks with an F16 embedding, 17.2 GB (weights.py QAT_Q4_0) = 16.02 GiB.
def test_type_in_a_gguf_repo_name_is_its_file(capsys):
    repo = "google/gemma-3-27b-it-qat-q4_0-gguf"
    for model in (repo, "hf.co/" + repo, repo + ":Q4_0"):
        assert abs(_weights(model, "llama.cpp") / (17.2e9 / GIB) - 1) < 0.015  # Q4_K_M: 15.40 GiB
    rc, out, err = run(["kv", "--model", repo, "--runtime", "vllm", "--ctx", "8192", "--vram", "24"], capsys)
    assert f"vllm serve {repo}:Q4_0 " in out and f"{repo}:Q4_K_M" not in out
    rc, out, err = run(["kv", "--model", repo, "--runtime", "llama.cpp", "--ctx", "8192", "--vram", "24"], capsys)
    assert f"-hf {repo} " in out and f"{repo}:Q4_K_M" not in out
    rc, out, err = run(["kv", "--model", repo + ":Q8_0", "--ctx", "8192", "--vram", "24"], capsys)
    assert rc == 2 and "holds Q4_0 files" in flat(err)
    from gpu_garden.memory.llm.names import load_builtin
    assert load_builtin("user/Qwen3-8B-Q8_0-GGUF").quant == "Q8_0"  # gguf-my-repo's one-file repos


# 4. Ollama's llama4 library (scout = 16x17b = latest) was refused, though Llama-4-Scout-17B-16E is built in. Ollama
# loading llama4:scout prints memory.weights.total 60.6 GiB and a 1.6 GiB projector (ollama#10739).
def test_ollama_llama4_tags_are_scout(capsys):
    for tag in ("llama4:scout", "llama4:16x17b", "llama4:latest", "llama4"):
        r = json_out(["kv", "--model", tag, "--ctx", "4096", "--vram", "80"], capsys)
        assert r["model"]["name"] == "Llama-4-Scout-17B-16E"
        assert abs(r["weights"] / GIB / 60.6 - 1) < 0.02
        assert abs(r["overhead"]["projector_weights"] / GIB / 1.6 - 1) < 0.03
    rc, out, err = run(["kv", "--model", "llama4:maverick", "--ctx", "4096", "--vram", "80"], capsys)
    assert rc == 2 and "maverick is not one of them" in flat(err)  # Llama-4-Maverick is not built in


# 5. kv.plan() models llama.cpp's --swa-full and -kvu, but the CLI had neither flag, and argparse took '--swa-full' for
# an abbreviation of --swa-full-tokens-ratio ("expected one argument"). Gemma-3-27B at -c 32768 with --swa-full: every
# layer keeps all 32768 cells, 62 layers x 16 KV heads x 128 x 2 (K, V) x 2 bytes = 8 KiB a layer and token: 15.5 GiB.
def test_swa_full_and_kv_unified_flags(capsys):
    base = ["kv", "--model", "Gemma-3-27B", "--runtime", "llama.cpp", "--ctx", "32768", "--vram", "24"]
    r = json_out(base + ["--swa-full"], capsys)
    assert r["kv_total"] == 62 * 16 * 128 * 2 * 2 * 32768 and "--swa-full" in r["command"]
    r = json_out(base, capsys)
    assert r["kv_total"] < 62 * 16 * 128 * 2 * 2 * 32768 / 4 and "--swa-full" not in r["command"]
    on = json_out(base + ["--parallel", "4", "--kv-unified"], capsys)
    off = json_out(base + ["--parallel", "4", "--no-kv-unified"], capsys)
    assert " -kvu " in on["command"] and "-kvu" not in off["command"] and on["kv_total"] < off["kv_total"]
    rc, out, err = run(base + ["--swa"], capsys)  # no abbreviations on kv's parser
    assert rc == 2 and "unrecognized arguments: --swa" in err
    rc, out, err = run(["kv", "--model", "Gemma-3-27B", "--runtime", "ollama", "--swa-full", "--ctx", "32768"], capsys)
    assert rc == 2 and "--swa-full" in err


# 6. An MLA model's latent cache with -ctk q8_0 -ctv f16 was accepted (rc 0); llama_init_from_model refuses
# is_mla() && type_k != type_v ("model does not support different K (%s) and V (%s) cache types"). The full-cache
# reading of a pre-MLA GGUF (--mla-cache full) keeps V apart and is not refused.
def test_mla_latent_cache_refuses_different_k_and_v_types(capsys):
    base = ["kv", "--model", "DeepSeek-R1", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "32768",
            "--vram", "80"]
    rc, out, err = run(base + ["--mla-cache", "latent", "--kv-dtype", "q8_0", "--kv-dtype-v", "f16"], capsys)
    assert rc == 1 and "model does not support different K (q8_0) and V (f16) cache types" in flat(err)
    rc, out, err = run(base + ["--kv-dtype", "q8_0", "--kv-dtype-v", "q8_0"], capsys)
    assert rc == 0 and "-ctk q8_0 -ctv q8_0" in out
    # the search keeps -ctk at -ctv's type (it printed -ctk q8_0 beside the f16 V here)
    r = json_out(["kv", "--model", "DeepSeek-V2-Lite", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx",
                  "163840", "--vram", "14", "--kv-dtype-v", "f16"], capsys)
    assert r["command"] and "-ctk" not in r["command"]
    rc, out, err = run(base + ["--mla-cache", "full", "--kv-dtype", "q8_0", "--kv-dtype-v", "f16"], capsys)
    assert rc == 0


# 7. Names: Mistral-Small-3.2 was refused though Mistral-Small-3.1-24B.json's _source says the same geometry; a repo id
# with a trailing '/' or '@revision' was unknown; a safetensors repo with a GGUF tag (Qwen/Qwen3-8B:Q4_K_M) was sized
# as a GGUF and printed 'vllm serve Qwen/Qwen3-8B:Q4_K_M', a file that repo lacks.
def test_names_mistral_small_32_revisions_and_a_tag_on_a_safetensors_repo(capsys):
    from gpu_garden.memory.llm.names import load_builtin
    assert load_builtin("mistralai/Mistral-Small-3.2-24B-Instruct-2506").name == "Mistral-Small-3.1-24B"
    for model in ("Qwen/Qwen3-8B/", "Qwen/Qwen3-8B@main"):
        rc, out, err = run(["kv", "--model", model, "--ctx", "8192", "--vram", "24"], capsys)
        assert rc == 0 and "vllm serve Qwen/Qwen3-8B --max-model-len 8192" in out
        assert load_builtin(model).name == "Qwen3-8B"
    rc, out, err = run(["kv", "--model", "Qwen/Qwen3-8B:Q4_K_M", "--ctx", "8192", "--vram", "24"], capsys)
    assert rc == 2 and "vllm serve" not in out and "Qwen/Qwen3-8B holds the safetensors checkpoint" in flat(err)
    assert "Qwen/Qwen3-8B-GGUF:Q4_K_M" in flat(err)
    assert load_builtin("Qwen/Qwen3-8B-GGUF:Q4_K_M").quant == "Q4_K_M"  # a GGUF repo's tag is its file, as before


# 8. A config.json's Qwen2.5-VL tower (vision_config model_type qwen2_5_vl) was priced as the generic ViT, two MLP
# matrices of intermediate_size 3456: 0.50 B values, 0.94 GiB for Qwen2.5-VL-7B. vLLM's qwen2_5_vl.py builds SwiGLU
# blocks (three matrices) and a patch merger; the checkpoint's 8.29 B parameters less the decoder's 7.62 B leave
# about 0.67 B for the tower.
def test_qwen25vl_tower_from_its_config():
    from dataclasses import replace
    from gpu_garden.memory.llm.names import load_builtin
    from gpu_garden.memory.llm.runtimes.ollama import projector
    vision = {"hidden_size": 1280, "in_chans": 3, "intermediate_size": 3420, "model_type": "qwen2_5_vl",
              "out_hidden_size": 3584, "spatial_patch_size": 14, "tokens_per_second": 2, "depth": 32, "num_heads": 16,
              "hidden_act": "silu", "patch_size": 14, "spatial_merge_size": 2, "temporal_patch_size": 2,
              "window_size": 112, "fullatt_block_indexes": [7, 15, 23, 31]}  # Qwen/Qwen2.5-VL-7B-Instruct config.json
    p = projector(replace(load_builtin("Qwen2.5-VL-7B"), vision=vision))
    assert abs(p["params"] / 0.67e9 - 1) < 0.03 and not p["generic"]
