"""Round 45 (task ellm21, batch 52 after its first sight): DeepSeek sparse attention (GLM-5) sized as vLLM keeps it.
Every expected figure is computed here by hand from the config's fields, not by the code under test."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import from_config

GiB = 1 << 30
# GLM-5's config.json fields (memory/llm/models/GLM-5.json names the copy read)
GLM5 = {"model_type": "glm_moe_dsa", "vocab_size": 154880, "hidden_size": 6144, "intermediate_size": 12288,
        "moe_intermediate_size": 2048, "num_hidden_layers": 78, "num_attention_heads": 64, "num_key_value_heads": 64,
        "n_shared_experts": 1, "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3,
        "q_lora_rank": 2048, "kv_lora_rank": 512, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64, "v_head_dim": 256,
        "index_head_dim": 128, "index_n_heads": 32, "index_topk": 2048, "max_position_embeddings": 202752,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
# per layer and token: fp8_ds_mla = 512 fp8 latent values + 512 / 128 fp32 scales + 64 rope values x 2 bytes;
# the indexer key = 128 fp8 values + 128 / 128 fp32 scales
FP8_DS_MLA = 512 + 512 // 128 * 4 + 64 * 2
INDEXER_KEY = 128 + 128 // 128 * 4


def test_glm5_is_built_in_and_its_fp8_cache_is_fp8_ds_mla_plus_the_indexer_key():
    s = llm.describe(model="zai-org/GLM-5-FP8")
    assert (s.name, s.quant) == ("GLM-5", "fp8")
    assert FP8_DS_MLA == 656 and INDEXER_KEY == 132
    r = llm.plan(s, "vllm", ctx=131072, tensor_parallel_size=8, kv_dtype="fp8")
    assert r["kv_per_token"] == 78 * (FP8_DS_MLA + INDEXER_KEY)  # 61,464 (the dense latent alone: 78 x 576)


def test_a_16_bit_cache_keeps_the_dense_latent_and_still_the_fp8_indexer_key():
    s = from_config(dict(GLM5), "config.json")
    r = llm.plan(s, "vllm", ctx=4096)
    assert r["kv_per_token"] == 78 * ((512 + 64) * 2 + INDEXER_KEY)  # 100,152


def test_the_per_token_size_matches_a_printed_glm51_pool():
    # vllm-voipmonitor-glm51-nvfp4-tp8-... (batch 30): --kv-cache-dtype fp8, MTP x3, 'GPU KV cache size 432,832
    # tokens', 'Available KV cache memory 25.09 GiB'. The MTP module's one attention layer joins the pool: 79 layers.
    # GLM-5.1 is built in as GLM-5's config since round 77 (its MTP drafter is not modelled); GLM-5's fields with 79 layers give
    assert abs(432832 * 79 * (FP8_DS_MLA + INDEXER_KEY) / GiB - 25.09) < 0.005
    assert abs(432832 * 79 * 576 / GiB - 25.09) > 1  # the dense fp8 latent alone would be 4.4 GiB short
    s = from_config(dict(GLM5, num_hidden_layers=79), "config.json")
    assert llm.plan(s, "vllm", ctx=4096, kv_dtype="fp8")["kv_per_token"] == 79 * 788


def test_the_indexer_weights_are_counted():
    # vLLM deepseek_v2.py Indexer: wq_b 2048 -> 32 x 128, wk 6144 -> 128, weights_proj 6144 -> 32, k_norm 2 x 128
    dsa = from_config(dict(GLM5), "config.json")
    dense = from_config(dict(GLM5, model_type="deepseek_v3"), "config.json")
    assert dsa.params - dense.params == 78 * (2048 * 32 * 128 + 6144 * 128 + 6144 * 32 + 2 * 128)


# llama.cpp's glm-dsa cache is read since round 74 (test_kv_ellm52.py); DeepSeek-V3.2's deepseek32 memory is not
@pytest.mark.parametrize("runtime", ["ollama"])  # SGLang's NSA profile is read since round 77 (test_kv_ellm55.py)
def test_other_runtimes_are_refused_for_dsa(runtime):
    with pytest.raises(UserError, match="modelled for vLLM, llama.cpp and SGLang only"):
        llm.plan(llm.describe(model="zai-org/GLM-5"), runtime, ctx=4096)


def test_shared_indexers_and_missing_index_fields_are_refused():
    # round 74 reads indexer_types (GLM-5.2: spec.indexer_layers); one that does not name each layer is refused
    with pytest.raises(UserError, match="indexer_types"):
        from_config(dict(GLM5, indexer_types=["full"] * 77), "config.json")
    cfg = dict(GLM5)
    del cfg["index_head_dim"]
    with pytest.raises(UserError, match="not modelled"):
        from_config(cfg, "config.json")


def test_other_dsa_versions_stay_refused_by_name_with_the_reason():
    for name in ("deepseek-ai/DeepSeek-V3.2",):  # GLM-5.1 is built in since round 77 (test_kv_ellm55.py)
        with pytest.raises(UserError, match="built in: GLM-5"):
            llm.describe(model=name)


def test_mla_down_projections_and_the_indexer_are_whole_on_every_tensor_parallel_gpu():
    # vLLM deepseek_v2.py: fused_qkv_a_proj (hidden -> q_lora_rank + kv_lora_rank + rope) has disable_tp=True; the
    # Indexer's wq_b / wk (fp8 here) and weights_proj (16-bit) are ReplicatedLinear. At TP 8 each GPU holds 7/8 of
    # them more than an eighth of the model
    MiB = 1 << 20
    s = llm.describe(model="zai-org/GLM-5-FP8")
    w1 = llm.plan(s, "vllm", ctx=4096)["weights"]
    w8 = llm.plan(s, "vllm", ctx=4096, tensor_parallel_size=8)["weights"]
    hand = (78 * (6144 * (2048 + 512 + 64) + 2048 * 32 * 128 + 6144 * 128) * 1 + 78 * 6144 * 32 * 2) * 7 / 8
    assert hand / MiB == pytest.approx(1672.1, abs=0.1)
    # the rest of w8 - w1 / 8 is the rotary tables, whole on every GPU (24.75 MiB x 7/8)
    assert 0 <= (w8 - w1 / 8) - hand < 22 * MiB
