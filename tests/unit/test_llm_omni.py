"""Omni models (Qwen2.5-Omni, Qwen3-Omni) keep the decoder in thinker_config.text_config. Expected values from
SGLang's own line for Qwen3-Omni-30B-A3B at tensor parallel 4 (sgl-project/sglang#15909: each rank prints
'KV Cache is allocated. #tokens: 2090351, K size: 23.92 GB'), and from the released config's geometry."""
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def test_qwen3_omni_k_size_at_tp4():
    s = llm.describe(model="Qwen/Qwen3-Omni-30B-A3B-Instruct")
    r = llm.plan(s, "sglang", ctx=32768, tensor_parallel_size=4)
    # 48 layers x 1 KV head a rank (4 / TP 4) x 128 x 2 bytes for K alone
    k = r["kv_per_token"] / 2 * 2090351 / GiB
    assert abs(k - 23.92) <= 0.005
    assert s.n_layers == 48 and s.n_experts == 128 and s.vocab == 152064


def test_thinker_config_is_read_from_a_config_file(tmp_path):
    cfg = {"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
           "thinker_config": {"text_config": {"vocab_size": 152064, "hidden_size": 2048, "num_hidden_layers": 48,
                                              "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
                                              "num_experts": 128, "num_experts_per_tok": 8,
                                              "moe_intermediate_size": 768, "decoder_sparse_step": 1},
                              "audio_config": {"num_hidden_layers": 32}},
           "talker_config": {"text_config": {"hidden_size": 1024, "num_hidden_layers": 20, "num_attention_heads": 16,
                                             "vocab_size": 3072}}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    s = llm.describe(config=str(path))
    assert (s.n_layers, s.hidden, s.n_kv_heads, s.head_dim_k) == (48, 2048, 4, 128)   # the thinker's, not the talker's
    assert any("omni" in n for n in s.notes)


def test_a_thinker_without_a_decoder_is_a_clear_error(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "qwen3_omni_moe", "thinker_config": {"audio_config": {}}}))
    with pytest.raises(UserError):
        llm.describe(config=str(path))
