"""Review rev68e's findings on fix68e (`gpu-garden kv`, issue 15 item 6), one test block per finding."""
from support.cli_run import flat, json_out, run, unwrap  # noqa: F401

GIB = 2**30


# 1. Qwen's published Qwen2.5-VL-7B-Instruct config.json (transformers 4.41.2's vision_config) names no model_type in
# its vision_config and gives intermediate_size 3420: the tower was priced as the generic ViT (0.50 B values).
PUBLISHED_Q25VL_VISION = {"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420,
                          "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
                          "spatial_merge_size": 2, "spatial_patch_size": 14, "window_size": 112,
                          "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2, "temporal_patch_size": 2}


def test_qwen25vl_published_vision_config_without_model_type():
    from dataclasses import replace
    from gpu_garden.memory.llm.names import load_builtin
    from gpu_garden.memory.llm.runtimes.ollama import projector
    p = projector(replace(load_builtin("Qwen2.5-VL-7B"), vision=dict(PUBLISHED_Q25VL_VISION)))
    # 8.29 B checkpoint parameters less the decoder's 7.62 B: about 0.67 B for the tower
    assert abs(p["params"] / 0.67e9 - 1) < 0.03 and not p["generic"]
    # the built-in description's trimmed vision_config (depth, widths) keeps its generic tower (test_llm_bnb_lora)
    assert projector(load_builtin("Qwen2.5-VL-7B"))["generic"]


# 2. gpt-oss Unsloth Dynamic tags (UD-Q4_K_XL) priced the experts re-quantized: 120b "between 61.18 and 115.57 GiB",
# 20b 10.95-20.69 GiB. Every gpt-oss GGUF keeps the experts MXFP4 (fix68e item 1); the Hub lists unsloth's
# gpt-oss-120b UD-Q4_K_XL at about 58.7 GiB and gpt-oss-20b's at 11.9 GB (11.08 GiB): both inside the range now.
def test_gpt_oss_unsloth_dynamic_keeps_mxfp4_experts():
    from gpu_garden.memory.llm.kv import plan
    from gpu_garden.memory.llm.names import load_builtin
    for model, real in (("unsloth/gpt-oss-120b-GGUF:UD-Q4_K_XL", 58.7), ("unsloth/gpt-oss-20b-GGUF:UD-Q4_K_XL", 11.08)):
        r = plan(load_builtin(model), runtime="llama.cpp", ctx=8192, vram=80 * GIB)
        lo, hi = (w / GIB for w in r["weights_range"])
        assert lo <= real <= hi and hi < 1.1 * real, (model, lo, hi)
        assert "experts MXFP4" in r["weights_how"]


# 3. The MLA K != V refusal and the "quantized V cache requires flash_attn to be enabled" wording came with llama.cpp
# PR #25871 (merged 2026-07-18; ggml-org/llama.cpp#26382 shows both at b10216); earlier builds ran an MLA latent cache
# with -ctk q8_0 -ctv f16 and worded the flash refusal "V cache quantization requires flash_attn". --runtime-version
# b8000 was refused as the newest is.
def test_mla_refusal_and_flash_wording_keyed_on_the_build(capsys):
    base = ["kv", "--model", "DeepSeek-R1", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "32768",
            "--vram", "80", "--kv-dtype", "q8_0", "--kv-dtype-v", "f16"]
    rc, out, err = run(base + ["--runtime-version", "b8000"], capsys)
    assert rc == 0 and "does not support different K" not in flat(err)
    for given in ([], ["--runtime-version", "b10216"]):
        rc, out, err = run(base + given, capsys)
        assert rc == 1 and "model does not support different K (q8_0) and V (f16) cache types" in flat(err)
    base = ["kv", "--model", "Qwen3-8B", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "32768",
            "--vram", "12", "--kv-dtype", "q8_0", "--flash-attn", "off"]
    rc, out, err = run(base + ["--runtime-version", "b8000"], capsys)
    assert rc == 1 and "V cache quantization requires flash_attn" in flat(err) and "to be enabled" not in flat(err)
    for given in ([], ["--runtime-version", "b10216"]):
        rc, out, err = run(base + given, capsys)
        assert rc == 1 and "quantized V cache requires flash_attn to be enabled" in flat(err)


# 4. Ollama's real llama4 tags 17b-scout-16e-instruct-q4_K_M / -q8_0 / -fp16 (ollama.com/library/llama4) were refused
# ("17b is not one of" the sizes read); the library's scout / 16x17b tags still resolve, 17b-maverick is refused.
# Ollama loading llama4:scout (the q4_K_M build) prints memory.weights.total 60.6 GiB (ollama#10739).
def test_llama4_scout_quant_tags(capsys):
    from gpu_garden.memory.llm.names import load_builtin
    for tag, quant in (("q4_K_M", "Q4_K_M"), ("q8_0", "Q8_0"), ("fp16", "F16")):
        spec = load_builtin(f"llama4:17b-scout-16e-instruct-{tag}")
        assert spec.name.startswith("Llama-4-Scout-17B-16E") and spec.quant == quant
    rc, out, err = run(["kv", "--model", "llama4:17b-scout-16e-instruct-q4_K_M", "--runtime", "ollama", "--ctx", "8192",
                        "--vram", "80"], capsys)
    assert rc == 0 and abs(_weights_line(out) / 60.6 - 1) < 0.02
    assert load_builtin("llama4:scout").name.startswith("Llama-4-Scout-17B-16E")
    assert load_builtin("llama4:16x17b").name.startswith("Llama-4-Scout-17B-16E")
    for tag in ("17b-maverick-128e-instruct-q4_K_M", "maverick", "128x17b"):
        rc, out, err = run(["kv", "--model", f"llama4:{tag}", "--runtime", "ollama", "--ctx", "8192", "--vram", "80"],
                           capsys)
        assert rc == 2 and "weights" not in out


def _weights_line(out: str) -> float:
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("weights"))
    return float(line.split()[1])


# 5. One-type GGUF repos named without a tag were read as Q4_K_M and the command named ':Q4_K_M', a file they lack:
# lmstudio-community/gpt-oss-{20,120}b-GGUF hold MXFP4 MoE files only, ggml-org's and lmstudio-community's
# gemma-3-*-it-qat-GGUF Google's QAT Q4_0 file only.
def test_one_type_gguf_repos_by_name(capsys):
    from gpu_garden.memory.llm.names import load_builtin
    for repo, quant, tag in (("lmstudio-community/gpt-oss-20b-GGUF", "MXFP4_MOE", "MXFP4"),
                             ("lmstudio-community/gpt-oss-120b-GGUF", "MXFP4_MOE", "MXFP4"),
                             ("ggml-org/gemma-3-27b-it-qat-GGUF", "Q4_0_QAT", "Q4_0"),
                             ("lmstudio-community/gemma-3-27b-it-qat-GGUF", "Q4_0_QAT", "Q4_0"),
                             ("hf.co/ggml-org/gemma-3-12b-it-qat-GGUF", "Q4_0_QAT", "Q4_0")):
        assert load_builtin(repo).quant == quant, repo
        rc, out, err = run(["kv", "--model", repo, "--runtime", "vllm", "--ctx", "8192", "--vram", "80"], capsys)
        bare = repo.removeprefix("hf.co/")
        assert f"vllm serve {bare}:{tag} " in out and f"{bare}:Q4_K_M" not in out, repo
    assert load_builtin("lmstudio-community/Qwen3-8B-GGUF").quant == "Q4_K_M"  # other repos as before


# 6. The tag-on-a-checkpoint-repo refusal (fix68e item 7) was skipped for the Hub forms: https://huggingface.co/Qwen/
# Qwen3-8B and hf.co/Qwen/Qwen3-8B:Q4_K_M were sized as a Q4_K_M GGUF that repo lacks (4.70 GiB); bare_id rejected
# 'https://huggingface.co/Qwen/Qwen3-8B/' (unknown model); Qwen/Qwen3-8B-FP8:Q4_K_M was read as fp8 and Q4_K_M at once.
def test_checkpoint_repo_refused_in_every_form(capsys):
    from gpu_garden.memory.llm.names import bare_id, load_builtin
    for model in ("https://huggingface.co/Qwen/Qwen3-8B", "https://huggingface.co/Qwen/Qwen3-8B/",
                  "hf.co/Qwen/Qwen3-8B:Q4_K_M", "hf.co/Qwen/Qwen3-8B", "huggingface.co/Qwen/Qwen3-8B:Q8_0",
                  "https://huggingface.co/Qwen/Qwen3-8B:Q4_K_M"):
        rc, out, err = run(["kv", "--model", model, "--runtime", "vllm", "--ctx", "8192", "--vram", "24"], capsys)
        assert rc == 2 and "vllm serve" not in out, model
        assert "Qwen/Qwen3-8B holds the safetensors checkpoint" in flat(err), (model, err)
    rc, out, err = run(["kv", "--model", "Qwen/Qwen3-8B-FP8:Q4_K_M", "--runtime", "vllm", "--ctx", "8192", "--vram",
                        "24"], capsys)
    assert rc == 2 and "vllm serve" not in out and "fp8" in flat(err) and "Q4_K_M" in flat(err)
    assert bare_id("https://huggingface.co/Qwen/Qwen3-8B/") == "https://huggingface.co/Qwen/Qwen3-8B"
    assert bare_id("http://hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M/") == "http://hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M"
    # GGUF repos in those forms and the checkpoint's bare id as before
    assert load_builtin("https://huggingface.co/unsloth/Qwen3-8B-GGUF/").quant == "Q4_K_M"
    assert load_builtin("hf.co/Qwen/Qwen3-8B-GGUF:Q8_0").quant == "Q8_0"
    assert load_builtin("Qwen/Qwen3-8B/").name == "Qwen3-8B"
    assert load_builtin("Qwen/Qwen3-8B-FP8").quant == "fp8"
