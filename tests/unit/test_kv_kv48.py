"""Task kv48: compute_buffer's graph as one named choice (rev20 D4).

3. compute_buffer(..., graph=) names the runtime's graph, one of llamacpp_compute.GRAPHS; glu= and graph= (two booleans,
   four mixes for three graphs) are gone. Expected bytes by hand from the models' config.json:
     Qwen2.5-7B (hidden 3584, intermediate 18944), flash attention, -ub 512, no logits, no mask:
       llama.cpp and ik_llama.cpp, the gated feed-forward's live set: 4 x 512 x (3 x 18944 + 3584) = 123,731,968
       Ollama's own engine, the term before round 59: 4 x 512 x (4 x 3584 + 18944) = 68,157,440
     Qwen3.5-9B (hidden 4096, 16 heads, 4 KV heads x 256), no flash attention, 65,536 cells, -ub 512 (scores and mask
     65,536 x (1 + 16)):
       llama.cpp, the gated-attention term: 4 x 512 x (22,535 + 1,114,112) = 2,327,853,056
       ik_llama.cpp and Ollama's own engine, the old term 1 + 4 x 4096: 4 x 512 x (16,385 + 1,114,112) = 2,315,257,856
"""
import json
from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parents[2] / "memory" / "llm" / "models"


def _spec(name):
    from gpu_garden.memory.llm.spec import from_config
    return from_config(json.loads((MODELS / f"{name}.json").read_text()), "config.json")


# Breaking it: compute_buffer back to glu= / graph= booleans (a graph name is then truthy: ik_llama.cpp gets mainline's
# no-flash term, Ollama's engine the live set, and an unknown name passes).
def test_compute_buffer_takes_one_named_graph():
    from gpu_garden.memory.llm.runtimes.llamacpp_compute import GRAPHS, compute_buffer
    assert GRAPHS == ("llama.cpp", "ik_llama.cpp", "ollama-engine")
    q7, q9 = _spec("Qwen2.5-7B"), _spec("Qwen3.5-9B")
    flash = {g: compute_buffer(q7, 8192, 512, True, logits=False, graph=g) for g in GRAPHS}
    assert flash == {"llama.cpp": 123_731_968, "ik_llama.cpp": 123_731_968, "ollama-engine": 68_157_440}
    scores = {g: compute_buffer(q9, 65_536, 512, False, logits=False, graph=g) for g in GRAPHS}
    assert scores == {"llama.cpp": 2_327_853_056, "ik_llama.cpp": 2_315_257_856, "ollama-engine": 2_315_257_856}
    assert compute_buffer(q9, 65_536, 512, False, logits=False) == 2_327_853_056  # llama.cpp's by default
    with pytest.raises(ValueError, match="graph must be one of"):
        compute_buffer(q9, 65_536, 512, False, graph="vllm")
    with pytest.raises(TypeError):
        compute_buffer(q9, 65_536, 512, False, glu=False)
