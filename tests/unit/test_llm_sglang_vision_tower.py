"""SGLang loads a vision-language model's tower with its weights, as vLLM does: sglang/srt/models/gemma3_mm.py
Gemma3ForConditionalGeneration.__init__ builds vision_tower = SiglipVisionModel(config.vision_config) and the
multi_modal_projector next to the language model. Gemma 3's tower is SigLIP So400m (about 0.4 B parameters, 27 blocks
of 1152 wide) plus a 1152 -> 5376 projector: about 0.8 GiB in 16 bits."""
from dataclasses import replace

import pytest

from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def test_sglang_counts_gemma3_tower():
    s = llm.describe(model="google/gemma-3-27b-it")
    kw = dict(ctx=4096, weights_dtype="bf16", mem_fraction_static=0.88, vram=80 * GiB)
    with_tower = llm.plan(s, "sglang", **kw)["weights"]
    text_only = llm.plan(replace(s, vision=None), "sglang", **kw)["weights"]
    assert (with_tower - text_only) / GiB == pytest.approx(0.8, abs=0.08)


def test_sglang_04_runner_lowers_a_given_fraction_for_a_multimodal_model():
    # model_runner.py (0.4.x, before sglang#6881): mem_fraction_static *= 0.95 when is_multimodal, given or default
    s = llm.describe(model="google/gemma-3-27b-it")
    kw = dict(ctx=4096, weights_dtype="bf16", mem_fraction_static=0.88, vram=80 * GiB)
    old = llm.plan(s, "sglang", runtime_version="0.4.4", **kw)
    new = llm.plan(s, "sglang", runtime_version="0.5.6", **kw)
    assert old["budget"] / new["budget"] == pytest.approx(0.95, abs=1e-6)
    text = llm.describe(model="Qwen/Qwen3-8B")  # no tower: unchanged
    assert (llm.plan(text, "sglang", runtime_version="0.4.4", **kw)["budget"]
            == llm.plan(text, "sglang", runtime_version="0.5.6", **kw)["budget"])
