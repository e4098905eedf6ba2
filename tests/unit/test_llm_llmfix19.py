"""Review 14c's defects in `gpu-garden kv` (task llmfix19): each test from vLLM's / llama.cpp's source or hand
arithmetic."""
import copy
import json

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import MODELS_DIR, from_config

GiB = 1 << 30


def _nemotron(pattern):
    with open(f"{MODELS_DIR}/NVIDIA-Nemotron-3-Nano-30B-A3B.json") as f:
        cfg = json.load(f)
    cfg = copy.deepcopy(cfg)
    cfg["hybrid_override_pattern"] = pattern
    if "E" not in pattern:
        cfg.pop("n_routed_experts", None)
    return from_config(cfg)


@pytest.mark.parametrize("pattern", ["M" * 52, "-" * 52, "M-" * 26])
def test_nemotron_without_attention_is_refused_on_vllm_and_planned_on_llamacpp(pattern):
    # no '*' layer: no attention page to size vLLM's pool from (the old code divided by a per-token size of 0);
    # llama.cpp keeps its recurrent-state buffer and plans it
    spec = _nemotron(pattern)
    with pytest.raises(llm.UserError, match="attention layer"):
        llm.plan(spec, "vllm", ctx=8192, vram=80 * GiB)
    assert llm.plan(spec, "llama.cpp", ctx=8192, vram=80 * GiB)["fits"] is True
