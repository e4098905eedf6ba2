"""Batch 30 (read by ellm14 after its first sight: a regression set). Expected values are what the runtimes printed,
in the pages each test names, or hand arithmetic from the models' config.json fields (source named)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def test_ollama_qwen36_tags_name_the_27b_and_the_moe_by_its_total():
    # bric.pe.kr's Ollama 0.24 num_ctx sweep runs 'qwen3.6:27b' ("27.8B, Q4"); the library's default build is Q4_K_M
    s = llm.describe(model="qwen3.6:27b")
    assert (s.name, s.quant) == ("Qwen3.6-27B", "Q4_K_M")
    assert llm.describe(model="qwen3.6:35b").name == "Qwen3.6-35B-A3B"
    assert llm.describe(model="qwen3.6:27b-q8_0").quant == "Q8_0"
    with pytest.raises(UserError, match="name one"):
        llm.describe(model="qwen3.6")


def test_ollama_qwen36_27b_cache_at_8k():
    # Qwen3.6-27B config.json: 16 full-attention layers of 4 KV heads x 256 (f16 K and V), 48 gated-DeltaNet layers
    # of 16 key heads and 48 value heads x 128, conv kernel 4; Ollama keeps the conv and recurrent state in f32
    full = 16 * 2 * 4 * 256 * 2 * 8192
    state = 48 * (48 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 48 * 128) * 4)
    assert state == 156_893_184
    r = llm.plan(llm.describe(model="qwen3.6:27b"), "ollama", ctx=8192, runtime_version="0.24.0")
    assert r["kv_total"] == full + state
