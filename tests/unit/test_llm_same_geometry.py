"""Models described in round 7 (batch 26) and names resolved to a built-in's geometry, each checked against a figure
the runtime printed (the thread named), never against a value the code computed."""
import pytest

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def test_medgemma_is_gemma3_27b_by_its_printed_global_cache():
    # llama.cpp#18270: MedGemma-27B-it, -c 35328 -np 4 -kvu, "non-SWA KV cache 35328 cells, 10 layers: CUDA0 KV buffer
    # 2760.00 MiB" (16 KV heads x 128 x 2 x f16 x 35328 cells x 10 global layers)
    s = llm.describe(model="google/medgemma-27b-it")
    assert s.name == "Gemma-3-27B" and any("Gemma 3 fine-tune" in n for n in s.notes)
    r = llm.plan(s, "llama.cpp", ctx=35328, parallel=4, kv_unified=True, flash_attn=True, weights_dtype="IQ3_XS")
    assert r["kv_detail"]["full_layers"] / MiB == pytest.approx(2760.00, abs=0.005)
    assert llm.describe(model="google/medgemma-4b-it").name == "Gemma-3-4B"


def test_deepseek_v31_is_v3_and_v32_is_not():
    for name in ("deepseek-ai/DeepSeek-V3.1", "deepseek-ai/DeepSeek-V3.1-Terminus"):
        s = llm.describe(model=name)
        r = llm.plan(s, "vllm", ctx=4096)
        assert s.name == "DeepSeek-V3" and r["kv_per_token"] == 70272  # KAITO's generator: 70272 bytes a token
    with pytest.raises(llm.UserError, match="unknown model"):
        llm.describe(model="deepseek-ai/DeepSeek-V3.2")  # its indexer cache is another architecture


def test_glm47_flash_ollama_tags():
    for tag, q in (("glm-4.7-flash:latest", "Q4_K_M"), ("glm-4.7-flash:q8_0", "Q8_0"), ("glm-4.7-flash:bf16", "BF16")):
        s = llm.describe(model=tag)
        assert (s.name, s.quant, s.ollama) == ("GLM-4.7-Flash", q, True)


def test_glm47_flash_ollama_014_prices_the_per_head_cache():
    # ollama#13863 (0.14.3): glm-4.7-flash:latest at 128000 tokens, ollama ps SIZE 145 GB (an 18 GB model): Ollama's
    # engine caches 20 heads x (256 + 256) values a token a layer, not MLA's 576 (47 x 128000 x 20480 B = 123 GB)
    s = llm.describe(model="glm-4.7-flash:latest")
    r = llm.plan(s, "ollama", ctx=128000, flash_attn="on", runtime_version="0.14.3")
    assert 140e9 < r["kv_total"] + r["weights"] < 150e9


def test_glm45_air_printed_head_and_kv():
    # ollama#12403 (0.12, Q8_0, 20000 tokens): weights nonrepeating 629.0 MiB = the 151552 x 4096 head in Q8_0
    s = llm.describe(model="zai-org/GLM-4.5-Air")
    r = llm.plan(s, "ollama", ctx=20000, weights_dtype="Q8_0", flash_attn="on", runtime_version="0.12.0")
    assert r["weights_by_role"]["output"] / MiB == pytest.approx(629.0, abs=0.05)
    assert s.n_kv_heads == 8 and s.head_dim_k == 128 and s.n_experts == 128


def test_mistral_small4_kv_of_one_1m_request():
    # kaito#2132 (vLLM 0.22.1, TP 2): one request of 1048576 tokens "needs 22.5 GiB KV cache" (MLA 256 + 64, 36 layers)
    s = llm.describe(model="mistralai/Mistral-Small-4-119B-2603")
    assert s.name == "Mistral-Small-4-119B" and s.mla
    r = llm.plan(s, "vllm", ctx=1048576, tensor_parallel_size=2, gpu_memory_utilization=0.84, vram=93.02 * GiB,
                 runtime_version="0.22.1", gpu_name="NVIDIA H100 NVL")
    assert r["kv_total"] / GiB == pytest.approx(22.5, abs=0.005)
    assert r["fits_as_requested"] is False  # refused: 22.5 GiB needed, 17.39 GiB available


def test_glm45_air_on_ollama_prices_the_mtp_block_and_the_fallback_graph():
    # ollama#12403 (0.12, Q8_0, 20000 tokens, three GPUs): layers.model 48, weights.total 108.8 GiB (repeating 108.2 +
    # nonrepeating 629.0 MiB), required.kv 3.6 GiB, graph.full 7.2 GiB, required.full 136.2 GiB. The GGUF's MTP block
    # (47th) is priced; glm4moe runs on the llama runner there, so GraphSize's fallback (GQA x cache / 6) applies
    s = llm.describe(model="zai-org/GLM-4.5-Air")
    r = llm.plan(s, "ollama", ctx=20000, weights_dtype="Q8_0", flash_attn="on", runtime_version="0.12", num_gpus=3)
    assert r["ollama_weights_total"] / GiB == pytest.approx(108.8, abs=0.05)
    assert r["kv_total"] / GiB == pytest.approx(3.6, abs=0.05)
    assert r["overhead"]["compute_buffer"] / GiB == pytest.approx(7.2, abs=0.05)
    assert r["ollama_required_full"] / GiB == pytest.approx(136.2, abs=0.1)
    # llama.cpp here leaves the block out: the difference is one MoE layer (128 x 3 x 4096 x 1408 + attention) with
    # two 151552 x 4096 copies and the 8192 -> 4096 eh_proj, ~3.61 B parameters at Q8_0's 34/32 bytes: ~3.57 GiB
    lc = llm.plan(s, "llama.cpp", ctx=20000, weights_dtype="Q8_0")
    assert (r["weights"] - lc["weights"]) / GiB == pytest.approx(3.57, abs=0.05) and s.n_layers == 46


def test_ollama_engine_gates_take_the_first_release_candidate():
    # fs/ggml/ggml.go OllamaEngineRequired as tagged: glm4moelite first in v0.14.3-rc2 (ollama#13805 ran 0.14.3-rc3),
    # gemma4 in v0.20.0-rc0, qwen3 in v0.12.0-rc0; absent from the tags before
    from gpu_garden.memory.llm.runtimes import ollama as ol, parse_version as pv
    cases = (("glm-4.7-flash:latest", "0.14.3-rc2", "0.14.3-rc1"), ("qwen3:8b", "0.12.0-rc0", "0.11.11"))
    for name, first, before in cases:
        s = llm.describe(model=name)
        assert ol.measured_layout(pv(first), s) and not ol.measured_layout(pv(before), s)
    # measured there: no buffer layer; 20 heads x (256 + 256) cached a token a layer (ps: 51 GB, 48 % on a 24 GB card)
    r = llm.plan(llm.describe(model="glm-4.7-flash:latest"), "ollama", ctx=32768, flash_attn="on",
                 runtime_version="0.14.3-rc3", vram=24 * GiB)
    assert "layer_buffer" not in r["overhead"] and r["kv_total"] == 47 * 32768 * 20 * 512 * 2


def test_medgemma_text_release_has_no_tower():
    # google/medgemma-27b-text-it is Gemma3ForCausalLM (no vision_config); medgemma-27b-it keeps Gemma 3's SigLIP tower
    assert llm.describe(model="google/medgemma-27b-text-it").vision is None
    assert llm.describe(model="google/medgemma-27b-it").vision
