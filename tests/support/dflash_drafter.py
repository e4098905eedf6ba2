"""The DFlash2 drafter of club-3090 #1085 as a test writes it (a config.json in a folder) and kv's plan of that run
(Qwen3.8-27B fp8 at TP 2 on two RTX 5090s, vLLM 0.27.1), shared by the tests that add a drafter to it."""
import json

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB


def write_drafter(tmp_path, **over):
    cfg = {"architectures": ["DFlash2DraftModel"], "hidden_size": 5120, "num_hidden_layers": 5,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 17408,
           "layer_types": ["sliding_attention"] * 5, "sliding_window": 2048, "dtype": "bfloat16",
           "dflash_config": {"target_layer_ids": [5, 19, 33, 47, 61]}}
    cfg.update(over)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return str(tmp_path)


def plan_1085(**knobs):
    return llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "vllm", ctx=147456, weights_dtype="fp8", kv_dtype="fp8",
                    tensor_parallel_size=2, gpu_memory_utilization=0.92, max_num_seqs=1, max_num_batched_tokens=8192,
                    gpu_name="NVIDIA GeForce RTX 5090", runtime_version="0.27.1", vram=31.36 * GiB, **knobs)
