"""Task ellm18 (session 18): regression rows that errored on a model the project can describe, and the worst rows;
each built-in and rule checked against a config.json or a runtime's printed figures."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.ollama_tags import ollama_tag

GiB, MiB = 1 << 30, 1 << 20


def test_ollama_codestral_is_the_built_in_codestral_in_its_k_quant_default():
    # codestral:22b (the library's one size, its default tag) is mistralai/Codestral-22B-v0.1; Ollama 0.22.1 loading it
    # prints file type 'Q4_K - Medium', 12.42 GiB (Agentic_MalGen ollama-server.log): not a Q4_0 library
    assert ollama_tag("codestral:22b")[:2] == ("Codestral-22B", "Q4_K_M")
    assert ollama_tag("codestral")[:2] == ("Codestral-22B", "Q4_K_M")
    assert ollama_tag("codestral:22b-v0.1-q8_0")[:2] == ("Codestral-22B", "Q8_0")
    s = llm.describe(model="codestral:22b")
    r = llm.plan(s, "ollama", ctx=32768, runtime_version="0.22.1", flash_attn=True)
    # 56 layers x 2 x 8 KV heads x 128 x 2 bytes x 32768 = 7.0 GiB ("kv cache 7.0 GiB" in the same log)
    assert r["kv_total"] == 56 * 2 * 8 * 128 * 2 * 32768
    # Q4_K_M blocks + Q6_K output on the GPU: the log's "model weights 12.3 GiB"
    assert abs(r["ollama_weights_total"] / GiB - 12.3) <= 0.1


def test_qwen3_vl_32b_is_qwen3_32b_decoder_with_262k_positions_and_its_tower():
    # config.json text_config (a fine-tune's copy, huggingface.co/quanliang/F1): 64 layers, 8 KV heads x 128, hidden
    # 5120, 262144 positions; vision_config 27 x 1152 -> 5120
    s = llm.describe(model="Qwen/Qwen3-VL-32B-Instruct")
    assert s.name == "Qwen3-VL-32B" and s.n_layers == 64 and s.n_kv_heads == 8 and s.max_ctx == 262144
    assert s.vision and s.vision["depth"] == 27 and s.vision["out_hidden_size"] == 5120
    # mattbucci's 2x R9700 smoke-256k log: SGLang 0.5.11, TP 2, fp8_e4m3, --mem-fraction-static 0.85: 'K size:
    # 8.34 GB' at '#tokens: 273201' = 64 layers x 4 KV heads (one GPU's) x 128 x 1 byte a token
    r = llm.plan(s, "sglang", ctx=262144, kv_dtype="fp8", weights_dtype="awq", vram=31.86 * GiB,
                 tensor_parallel_size=2, mem_fraction_static=0.85, runtime_version="0.5.11",
                 gpu_name="AMD Radeon AI PRO R9700", attention_backend="triton")  # the rig's triton (task ellm66:
    # without it SGLang picks aiter on ROCm, whose x 0.85 cut of the fraction this start did not have)
    assert r["kv_per_token"] == 2 * 64 * 4 * 128
    assert round(273201 * r["kv_per_token"] / 2 / GiB, 2) == 8.34
    assert abs(r["sglang_max_total_tokens"] / 273201 - 1) <= 0.05


def test_bielik_11b_v3_has_the_v2_line_geometry_its_gguf_prints():
    # the v3.0 Q8_0 GGUF (KlimtechRAG's llama.cpp log): 50 layers, n_embd 4096, 8 KV heads x 128, '11.17 B' params,
    # file 11.05 GiB; the v2.3 config.json copies give FFN 14336, 32 heads, vocab 32128, untied. By hand:
    # 2 x 32128 x 4096 + 50 x (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 + 2 x 4096) + 4096 = 11,168,796,672
    s = llm.describe(model="speakleash/Bielik-11B-v3.0-Instruct")
    assert s.name == "Bielik-11B-v3.0" and s.n_layers == 50 and s.max_ctx == 32768
    layer = 2 * 4096 ** 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
    assert s.params == 2 * 32128 * 4096 + 50 * layer + 4096 == 11_168_796_672
    assert round(s.params * 34 / 32 / GiB, 2) == 11.05  # the file in Q8_0
    # its CPU KV buffer: 748.00 MiB for the 11 host layers at 32768 cells in q8_0
    r = llm.plan(s, "llama.cpp", ctx=32768, kv_dtype="q8_0", weights_dtype="Q8_0")
    assert r["kv_per_token"] * 11 // 50 * 32768 == 748 * MiB


def test_a_nightly_version_reads_as_the_newest_and_says_so():
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm.runtimes import parse_version, version_note
    # vllm#32105: 'nightly 58996f3 (January 2026)'; vllm/vllm-openai:nightly; a nightly names no release
    for v in ("nightly 58996f3 (January 2026)", "nightly", "Nightly-20260128"):
        assert parse_version(v) is None
        assert "nightly build, not a release" in version_note(v)
    # only the word itself: 'nightlyish' or 'night' stays unreadable
    for v in ("nightlyish", "night 5"):
        try:
            parse_version(v)
        except UserError:
            continue
        raise AssertionError(v)
    assert parse_version("0.15.0") == (0, 15, 0) and version_note("0.15.0") is None


def test_granite_4_h_micro_is_a_mamba2_hybrid_with_four_attention_layers():
    import pytest
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm.runtimes import sglang as SG
    s = llm.describe(model="ibm-granite/granite-4.0-h-micro")
    assert s.name == "Granite-4.0-H-micro"
    assert s.layer_kinds.count("full") == 4 and s.layer_kinds.count("mamba") == 36
    # by hand: a Mamba-2 layer: in_proj 2048 x (2 x 4096 + 2 x 128 + 64), out_proj 4096 x 2048, conv 4352 x 5, dt_bias
    # A_log D 3 x 64, norm 4096; an attention layer q o 2 x 2048^2, k v 2 x 2048 x 512; every layer's MLP 3 x 2048 x 8192
    # and 2 norms; the tied token table 100352 x 2048 and the final norm: 3.19 B values, 5.94 GiB ('mem usage=5.98 GB')
    mamba = 2048 * 8512 + 4096 * 2048 + 4352 * 5 + 3 * 64 + 4096
    attn = 2 * 2048 ** 2 + 2 * 2048 * 512
    mlp = 3 * 2048 * 8192 + 2 * 2048
    assert s.params == 36 * mamba + 4 * attn + 40 * mlp + 100352 * 2048 + 2048
    assert abs(s.params * 2 / GiB / 5.98 - 1) <= 0.01
    # SGLang's pool: 'K size: 1.52 GB' at 399,740 tokens = 4 layers x 8 KV heads x 64 x 2 bytes
    r = llm.plan(s, "sglang", ctx=131072, vram=16 * GiB, mem_fraction_static=0.8)
    assert r["kv_per_token"] == 2 * 4 * 8 * 64 * 2
    # a request's state: 36 Mamba-2 layers x (3 x 4352 bf16 conv values + 64 x 64 x 128 fp32 values)
    assert SG.mamba_state_per_req(s) == 36 * (3 * 4352 * 2 + 64 * 64 * 128 * 4) == 76_437_504
    with pytest.raises(UserError, match="Mamba-2 state is modelled for SGLang and llama.cpp"):
        llm.plan(s, "vllm", ctx=8192)


def test_qwen3_vl_tower_counts_its_patch_mergers_and_position_table():
    from gpu_garden.memory.llm.runtimes.ollama import projector
    s = llm.describe(model="Qwen/Qwen3-VL-32B-Instruct")
    # transformers Qwen3VLVisionModel by hand: 27 blocks x (qkv + proj 4 x 1152^2 + 4 x 1152 bias, fc1/fc2
    # 2 x 1152 x 4304 + 4304 + 1152, two LayerNorms 4 x 1152); Conv3d 3 x 2 x 16 x 16 x 1152 + 1152; position table
    # 2304 x 1152; four mergers (4608 -> 4608 -> 5120, biased), the output's normed on 1152, three deepstack ones on 4608
    blocks = 27 * (4 * 1152 ** 2 + 4 * 1152 + 2 * 1152 * 4304 + 4304 + 1152 + 4 * 1152)
    mergers = 4 * (4608 ** 2 + 4608 + 4608 * 5120 + 5120) + 2 * 1152 + 3 * 2 * 4608
    expected = blocks + 3 * 2 * 16 * 16 * 1152 + 1152 + 2304 * 1152 + mergers
    assert expected == 595_266_800
    assert projector(s)["params"] == expected
