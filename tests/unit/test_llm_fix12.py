"""Review 12 fixes: each test fails on the code before its fix."""
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _qwen32_cards(ngl):
    s = llm.describe(model="Qwen/Qwen3-32B")
    r = llm.plan(s, "llama.cpp", ctx=40960, weights_dtype="Q5_K_M", vram=23.56 * GiB, ngl=ngl, num_gpus=2,
                 runtime_version="b7800", flash_attn=True)
    return [d["total"] for d in r["devices"]]


def test_fit_keeps_its_target_free_on_each_card_not_the_sum():
    # b7800 has --fit: with no -ngl it keeps 1 GiB free on every card (llama.cpp common/fit: fit_target per
    # device). -ngl 99 puts the same 64 layers + output on the cards with the 2% margin instead:
    # int(0.02 * 23.56 GiB) = 505,947,147 bytes. So each card differs by 1 GiB - 505,947,147, not 2 GiB - that.
    fit, plain = _qwen32_cards(None), _qwen32_cards(99)
    for a, b in zip(fit, plain):
        assert a - b == GiB - 505947147


def _v2_lite_awq(version):
    s = llm.describe(model="deepseek-ai/DeepSeek-V2-Lite")
    return llm.plan(s, "vllm", ctx=4096, weights_dtype="awq", vram=24 * GiB, runtime_version=version)


def test_newest_vllm_keeps_the_mla_kv_b_proj_copy_as_0_26_does():
    # no version is the newest: the 16-bit kv_b_proj copy of every vLLM >= 0.8 is there too. DeepSeek-V2-Lite
    # config.json: kv_lora_rank 512, 16 heads, qk_nope_head_dim 128, v_head_dim 128, 27 layers ->
    # 512 * 16 * (128 + 128) * 2 bytes * 27 = 113,246,208 bytes = 108.00 MiB
    new, pinned = _v2_lite_awq(None), _v2_lite_awq("0.26.0")
    assert new["weights"] == pinned["weights"]
    assert "108.00 MiB of kv_b_proj" in new["weights_how"]


def test_skip_matcher_reads_entries_as_the_runtimes_do():
    from gpu_garden.memory.llm.weights import skip_matcher
    q = "model.layers.3.self_attn.q_proj"
    assert skip_matcher(["re:.*self_attn.*"])(q)                  # compressed-tensors regex (re.match)
    assert not skip_matcher(["re:self_attn"])(q)                   # re.match anchors at the name's start
    assert skip_matcher(["model.layers.3.self_attn"])(q)           # a dotted parent (bitsandbytes/unsloth)
    assert skip_matcher(["language_model.model.layers.3"])(q)      # another root, same layer
    assert not skip_matcher(["model.layers.30.self_attn"])(q)      # layer 30 is not layer 3
    assert not skip_matcher(["model.layers.3.mlp"])(q)
    assert skip_matcher(["q_proj"])(q) and not skip_matcher(["q"])(q)  # a whole dotted part, not a substring
    import pytest
    from gpu_garden.memory.errors import UserError
    with pytest.raises(UserError, match="not a valid regex"):
        skip_matcher(["re:(unclosed"])


def test_a_regex_ignore_keeps_kimi_k2_kv_b_proj_16_bit():
    # moonshotai/Kimi-K2-Thinking quantization_config.ignore carries "re:.*self_attn.*": every kv_b_proj stays bf16,
    # so vLLM (0.11.0, >= 0.8) makes no dequantized copy; weights equal the newest's and name no kv_b_proj
    s = llm.describe(model="moonshotai/Kimi-K2-Thinking")
    r = llm.plan(s, "vllm", ctx=262144, vram=140 * GiB, tensor_parallel_size=8, runtime_version="0.11.0")
    assert "kv_b_proj" not in r["weights_how"]


def test_regex_ignore_entries_keep_dense_matmuls_16_bit():
    # a dense model whose ignore regex names every layer's attention: the 16-bit share is 4 attention matmuls a
    # layer. Qwen2.5-7B config.json: hidden 3584, 28 heads x 128, 4 KV heads x 128, 28 layers ->
    # q 3584*3584 + k 3584*512 + v 3584*512 + o 3584*3584 = 29,360,128 a layer, x 28 = 822,083,584
    from dataclasses import replace
    from gpu_garden.memory.llm.weights import skipped_linear_params
    s = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    assert skipped_linear_params(replace(s, quant_skip=("re:.*self_attn.*",))) == 822083584
    assert skipped_linear_params(replace(s, quant_skip=("re:.*layers\\.0\\..*",))) == 29360128 + 3 * 3584 * 18944


def test_the_verdict_names_the_cards_only_when_each_is_judged(capsys):
    from gpu_garden.memory import cli
    argv = ["kv", "--model", "Qwen/Qwen3-32B", "--runtime", "llama.cpp", "--weights-dtype", "Q5_K_M", "--ctx", "40960",
            "--flash-attn", "off"]
    cli.main(argv + ["--vram", "47.12", "--tensor-split", "1,1"])  # no --num-gpus: --vram is the two cards' sum
    out = capsys.readouterr().out
    assert "on 47.12 GiB: fits" in out and " x 47.12" not in out
    cli.main(argv + ["--vram", "23.56", "--tensor-split", "1,1", "--num-gpus", "2"])  # each card on 23.56
    assert "on 2 x 23.56 GiB: fits" in capsys.readouterr().out


def test_a_forks_own_release_number_is_no_llama_cpp_release():
    # "v0.1.0 (... fork)" is the fork's own numbering: for llama.cpp it reads as the newest with the fork note, as
    # "tqp-v0.1.0 (... fork)" does; as release 0.1.0 it would sit below every llama.cpp gate (FIT is b7400)
    from gpu_garden.memory.llm.runtimes import parse_version, version_note
    fork = "v0.1.0 (TheTom/llama-cpp-turboquant fork)"
    assert parse_version(fork, "llama.cpp") is None
    assert "fork's own numbering" in version_note(fork, "llama.cpp")
    assert parse_version("b7800 (a fork of it)", "llama.cpp") == (7800,)   # a build the fork follows is read
    assert parse_version(fork, "vllm") == (0, 1, 0)                        # vLLM/Ollama releases parse as before
    s = llm.describe(model="Qwen/Qwen3-32B")
    r = llm.plan(s, "llama.cpp", ctx=40960, weights_dtype="Q5_K_M", vram=23.56 * GiB, runtime_version=fork)
    assert any("fork's own numbering" in n for n in r["notes"])
    assert r["overhead"]["margin"] == GiB   # --fit's 1 GiB target (llama.cpp common: fit target 1024 MiB), newest's gate


def test_a_conv_kernel_of_one_with_mtp_tokens_is_a_clear_error(tmp_path):
    # linear_conv_kernel_dim 1 leaves a conv state of 1 - 1 = 0 rows: the MTP rows (k - 1 + n) have no row size to
    # scale, and vLLM's causal_conv1d kernels run widths 2 to 4 only. Was: ZeroDivisionError.
    import json
    from pathlib import Path
    import pytest
    from gpu_garden.memory.errors import UserError
    import gpu_garden.memory.llm as pkg
    cfg = json.loads((Path(pkg.__file__).parent / "models" / "Qwen3.6-27B.json").read_text())
    cfg.pop("_source", None)
    cfg["text_config"]["linear_conv_kernel_dim"] = 1
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    s = llm.describe(config=str(tmp_path / "config.json"))
    llm.plan(s, "vllm", ctx=32768, vram=80 * GiB)  # without MTP tokens: sized (a 0-row conv state)
    with pytest.raises(UserError, match="linear_conv_kernel_dim 1"):
        llm.plan(s, "vllm", ctx=32768, vram=80 * GiB, mtp_tokens=3)


def test_kimi_k2_thinking_container_fields():
    # ignore entries as tensor_cast's test of the remote config expects them (layer-0 dense MLP matched, routed
    # experts not); group 32 is inferred (K2.6's config, the QAT recipe), see the model file's _source
    from gpu_garden.memory.llm.weights import skip_matcher
    s = llm.describe(model="moonshotai/Kimi-K2-Thinking")
    assert s.quant == "int4" and s.quant_group == 32
    ignored = skip_matcher(s.quant_skip)
    assert ignored("model.layers.0.mlp.gate_proj") and ignored("model.layers.60.mlp.shared_experts.down_proj")
    assert ignored("lm_head") and not ignored("model.layers.1.mlp.experts.0.gate_proj")
