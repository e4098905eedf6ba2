"""Review 13b findings (task ellm15). Expected values come from the runtimes' source (named) or hand arithmetic."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm


@pytest.mark.parametrize("name", ["GLM-4.6-REAP-218B-A32B-FP8", "GLM-4.6-REAP-268B-A32B", "glm-4.6-air",
                                  "Kimi-K2.5-REAP-500B"])
def test_a_size_or_air_after_glm46_or_kimi_k25_is_another_model(name):
    # Cerebras' REAP checkpoints prune experts (218B / 268B of GLM-4.6's 355B): GLM-4.7's 352.8 B would be a 1.3-1.6x error
    with pytest.raises(UserError, match="unknown model"):
        llm.describe(model=name)


@pytest.mark.parametrize("name,base", [("GLM-4.6", "GLM-4.7"), ("GLM-4.6-FP8", "GLM-4.7"), ("Kimi-K2.5", "Kimi-K2-Thinking"),
                                       ("kimi-k2.6-instruct", "Kimi-K2-Thinking")])
def test_glm46_and_kimi_k25_still_read(name, base):
    assert llm.describe(model=name).name == base


def test_ollama_qwen35_27b_tag_is_sized_as_the_builtin_qwen35_27b():
    # ollama.com/library/qwen3.5:27b is Qwen/Qwen3.5-27B, built in as Qwen3.6-27B's geometry (THUDM/slime
    # scripts/models/qwen3.5-27B.sh): 16 full-attention layers of 4 KV heads x 256 in f16, 48 gated-DeltaNet layers
    # of 16 key heads and 48 value heads x 128 (conv kernel 4) kept in f32 by Ollama
    s = llm.describe(model="qwen3.5:27b")
    assert (s.name, s.quant, s.ollama) == ("Qwen3.6-27B", "Q4_K_M", True)
    assert any("library's default build" in n and "Qwen3.5-27B" in n for n in s.notes)
    full = 16 * 2 * 4 * 256 * 2 * 8192
    state = 48 * (48 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 48 * 128) * 4)
    assert llm.plan(s, "ollama", ctx=8192, runtime_version="0.24.0")["kv_total"] == full + state
    assert llm.describe(model="qwen3.5:27b-q8_0").quant == "Q8_0"
