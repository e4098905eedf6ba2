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
