"""Task arch25: built-in descriptions for models `gpu-garden kv` refused, each checked by hand against its source, and
the architectures kv does not model refused by name and by config.json with what is not read."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import from_config

MiB = 1 << 20


# deepseek-coder:33b as llama.cpp prints it (Ollama 0.3.14, simo-hue/LLM-Mob-As-Mobility-Interpreter ollama_gpu0.log):
# params by hand, untied: token table and output 2 x 32256 x 7168 = 462,422,016; a layer q/o 2 x 7168^2 = 102,760,448,
# k/v 2 x 7168 x 1024 = 14,680,064, mlp 3 x 7168 x 19200 = 412,876,800, two norms 14,336: 530,331,648; 62 layers
# 32,880,562,176; a final norm 7168: 33,342,991,360 (llama.cpp: 'model params = 33.34 B')
def test_deepseek_coder_33b_params():
    s = llm.describe(model="deepseek-ai/deepseek-coder-33b-instruct")
    assert s.name == "DeepSeek-Coder-33B" and not s.tied and not s.generic
    assert s.params == 33_342_991_360


# its KV buffer: 1984.00 MiB for 8192 cells = 62 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes x 8192
def test_deepseek_coder_33b_cache():
    s = llm.describe(model="deepseek-coder:33b")
    assert s.name == "DeepSeek-Coder-33B" and s.quant == "Q4_0"  # general.file_type 2 in the blob it loads
    r = llm.plan(s, "llama.cpp", ctx=8192, weights_dtype="Q4_0")
    assert r["kv_total"] == 62 * 8 * 128 * 2 * 2 * 8192 == 1984 * MiB


def test_deepseek_coder_latest_is_not_guessed():
    with pytest.raises(UserError, match="latest"):
        llm.describe(model="deepseek-coder")


# granite-3.0-1b-a400m-instruct: params by hand, tied: token table 49155 x 1024 = 50,334,720; a layer q/o 2 x 1024^2 =
# 2,097,152, k/v 2 x 1024 x 512 = 1,048,576, 32 experts x (gate+up 2 x 512 x 1024 + down 512 x 1024) = 50,331,648,
# router 32 x 1024 = 32,768, two norms 2048: 53,512,192; 24 layers 1,284,292,608; final norm 1024: 1,334,628,352
def test_granite_1b_a400m_params():
    s = llm.describe(model="ibm-granite/granite-3.0-1b-a400m-instruct")
    assert s.name == "Granite-3.0-1B-A400M" and s.tied
    assert (s.n_experts, s.n_experts_per_tok, s.moe_intermediate) == (32, 8, 512)
    assert s.params == 1_334_628_352


# llama.cpp (thebiss/llama-cpp-mkl-docker notes.md, Q8_0 on Vulkan, n_ctx 4096): KV buffer 192.00 MiB = 24 layers x
# 8 KV heads x 64 x 2 (K, V) x 2 bytes x 4096
def test_granite_1b_a400m_cache():
    s = llm.describe(model="ibm-granite/granite-3.0-1b-a400m-instruct")
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q8_0")
    assert r["kv_total"] == 24 * 8 * 64 * 2 * 2 * 4096 == 192 * MiB


@pytest.mark.parametrize("name, reason", [
    ("moonshotai/Kimi-Linear-48B-A3B-Instruct", "Kimi Delta Attention"),
])
def test_unmodelled_architectures_are_refused_by_name_with_what_is_not_read(name, reason):
    with pytest.raises(UserError, match=reason) as e:
        llm.describe(model=name)
    assert "refused the same way" in str(e.value)


# a config.json of each is refused too, not sized as a generic decoder (one test a row of spec.UNMODELLED_CONFIGS);
# a nemotron-nas config without block_configs, or with empty blocks, is refused (nemotron_nas.read_blocks, task kv54)
_BASE = {"num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 2,
         "vocab_size": 1000}


@pytest.mark.parametrize("extra, reason", [
    ({"model_type": "kimi_linear"}, "Kimi Delta Attention"),
    ({"model_type": "nemotron-nas"}, "block_configs"),
    ({"model_type": "llama", "block_configs": [{}] * 4}, "block_configs"),
])
def test_unmodelled_configs_are_refused(extra, reason):
    with pytest.raises(UserError, match=reason):
        from_config(dict(_BASE, **extra), "config.json")


def test_a_nemotron_h_config_without_latent_experts_is_still_read():
    cfg = dict(_BASE, model_type="nemotron_h", hybrid_override_pattern="M*ME", n_routed_experts=8,
               moe_latent_size=None, mamba_num_heads=16, mamba_head_dim=64, n_groups=8, ssm_state_size=128, conv_kernel=4)
    assert from_config(cfg, "config.json").n_layers == 4


# Qwen/Qwen3.5-4B (miles' Megatron arguments and kiln's hard-coded config): params by hand, tied token table
# 248320 x 2560 = 635,699,200. A full-attention layer: q with its output gate 2560 x (2 x 16 x 256) = 20,971,520, k/v
# 2 x 2560 x 1024 = 5,242,880, o 4096 x 2560 = 10,485,760, q/k norms 512; mlp 3 x 2560 x 9216 = 70,778,880; two norms
# 5120: 107,484,672. A gated-DeltaNet layer (keys 16 x 128 = 2048, values 32 x 128 = 4096): in_proj_qkvz 2560 x
# (2 x 2048 + 2 x 4096) = 31,457,280, in_proj_ba 2560 x 64 = 163,840, conv1d (2 x 2048 + 4096) x 4 = 32,768, dt_bias and
# A_log 2 x 32, norm 128, out_proj 4096 x 2560 = 10,485,760; the same mlp and norms: 112,923,840. 8 full + 24 linear
# layers and a final norm 2560: 4,205,751,296
def test_qwen35_4b_params():
    s = llm.describe(model="Qwen/Qwen3.5-4B")
    assert s.name == "Qwen3.5-4B" and s.tied and s.mtp_layers == 1
    assert s.params == 635_699_200 + 8 * 107_484_672 + 24 * 112_923_840 + 2560 == 4_205_751_296


# SGLang (ericflo/kiln sglang_segfault_evidence.log): K size 7.09 GB for 464,641 tokens = 8 full-attention layers x 4 KV
# heads x 256 x 2 bytes a token; K and V together 32,768 bytes a token
def test_qwen35_4b_cache_per_token():
    s = llm.describe(model="Qwen/Qwen3.5-4B")
    assert s.layer_kinds.count("full") == 8 and (s.n_kv_heads, s.head_dim_k) == (4, 256)
    r = llm.plan(s, "vllm", ctx=4096, weights_dtype="bf16")
    assert r["kv_per_token"] == 8 * 4 * 256 * 2 * 2 == 32768
    assert round(464641 * 8 * 4 * 256 * 2 / (1 << 30), 2) == 7.09


# rednote-hilab/dots.ocr's decoder (Qwen2 layout, q/k/v biased): params by hand, untied: token table and output
# 2 x 151936 x 1536 = 466,747,392; a layer q 1536^2 + 1536 = 2,360,832, k/v 2 x (1536 x 256 + 256) = 786,944, o 1536^2 =
# 2,359,296, mlp 3 x 1536 x 8960 = 41,287,680, two norms 3072: 46,797,824; 28 layers 1,310,339,072; a final norm 1536:
# 1,777,088,000 (the decoder's alone: its vision tower, described since task mm56, is counted apart, test_kv_mm56)
def test_dots_ocr_decoder_params():
    s = llm.describe(model="rednote-hilab/dots.ocr")
    assert s.name == "dots.ocr" and not s.tied and s.vision["num_hidden_layers"] == 42
    assert s.params == 1_777_088_000


# vLLM 0.11.1 (DoanNgocCuong/fintech vllm.log): 'GPU KV cache size: 150,880 tokens' from 4.03 GiB available = 28,680
# bytes a token, 28 layers x 2 KV heads x 128 x 2 (K, V) x 2 bytes = 28,672 (its 131072-token window is off: every
# layer full attention)
def test_dots_ocr_cache_per_token():
    s = llm.describe(model="rednote-hilab/dots.ocr")
    assert s.layer_kinds.count("full") == 28
    r = llm.plan(s, "vllm", ctx=4096, weights_dtype="bf16")
    assert r["kv_per_token"] == 28 * 2 * 128 * 2 * 2 == 28672
    assert abs(4.03 * (1 << 30) / 150880 / 28672 - 1) < 0.001
