"""SGLang's default --mem-fraction-static by version (runtimes/sglang.py default_mfs). Expected values are the
fractions SGLang printed: 0.911 on an MI355X (288 GiB) with sglang#18263's branch of July 2026, and 0.85 for four L4s
at TP 4 on 0.4.3.post4 (didier-durand/llms-in-clouds, server_args)."""
import json

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version
from gpu_garden.memory.llm.runtimes import sglang as SG

GiB, MiB = 1 << 30, 1 << 20


def test_newest_reserve_follows_the_card():
    # 512 + 1.5 x 16384 + 2 x 512 + 1/8 x 1024 MiB reserved on a card above 160 GiB: 0.911 printed; the 0.4 table
    # would give 0.88, a 1.0 MiB-per-token activation term 0.939
    assert SG.default_mfs(1, 288 * 1024, None) == 0.911


def test_the_04_table_stays_for_04_releases():
    assert SG.default_mfs(4, 23034, parse_version("0.4.3.post4")) == 0.85     # printed mem_fraction_static=0.85
    assert SG.default_mfs(4, 23034, None) != 0.85                              # the newest reserve differs


def test_plan_uses_the_card_reserve_and_says_so():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B-Instruct-2507")
    new = llm.plan(s, "sglang", ctx=32768, vram=288 * GiB)
    old = llm.plan(s, "sglang", ctx=32768, vram=288 * GiB, runtime_version="0.4.6")
    assert new["budget"] / old["budget"] == pytest.approx(0.911 / 0.88, rel=1e-6)
    assert any("--mem-fraction-static 0.911" in n for n in new["notes"])
    assert not any("SGLang's default for a" in n for n in old["notes"])


@pytest.mark.parametrize("model, factor", [
    # hand-derived from adjust_mem_fraction_for_vlm (no printed fraction read): 0.95 x (1 - 0.1 x (ratio - 1)), ratio =
    # num_hidden_layers x hidden_size^2 / (24 x 1024^2). Qwen2.5-VL's vision_config names `depth`, not
    # num_hidden_layers, so SGLang takes 24 layers: ratio 1.5625 -> 0.896563 (its real 32 layers would give 0.847)
    ("Qwen2.5-VL-7B", 0.896563),
    # Gemma 3's SigLIP, 27 layers of 1152: ratio 1.423828 -> 0.909736
    ("Gemma-3-27B", 0.909736),
    ("Qwen2.5-7B", 1.0),                                               # no vision tower
])
def test_vision_models_get_sglangs_vlm_reduction(model, factor):
    s = llm.describe(model=model)
    assert SG.vlm_factor(s.vision) == pytest.approx(factor, abs=1e-6)
    r = llm.plan(s, "sglang", ctx=8192, vram=80 * GiB)
    base = SG.default_mfs(1, 80 * 1024, None)
    assert r["budget"] / (base * (80 * GiB - SG.CUDA_CONTEXT)) == pytest.approx(factor, abs=1e-6)


def test_an_omni_model_keeps_the_fraction(tmp_path):
    # Qwen3-Omni nests its vision_config in thinker_config: SGLang's hf_config.vision_config is None there, although
    # kv reads the thinker's tower
    cfg = {"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
           "thinker_config": {"text_config": {"vocab_size": 152064, "hidden_size": 2048, "num_hidden_layers": 48,
                                              "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
                                              "num_experts": 128, "num_experts_per_tok": 8,
                                              "moe_intermediate_size": 768, "decoder_sparse_step": 1},
                              "vision_config": {"depth": 27, "hidden_size": 1152, "num_heads": 16}}}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    s = llm.describe(config=str(path))
    assert s.vision and SG.vlm_factor(s.vision) < 1
    r = llm.plan(s, "sglang", ctx=8192, vram=80 * GiB)
    assert not any("adjust_mem_fraction_for_vlm" in n for n in r["notes"])
