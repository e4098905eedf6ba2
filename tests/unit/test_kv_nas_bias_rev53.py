"""Review rev53: Llama-Nemotron NAS with attention_bias / mlp_bias (nemotron_nas.nas_params). The published checkpoints
have neither, so test_kv_kv54.py's by-hand counts never reached these terms; the biases below are worked by hand from
vLLM's LlamaAttention (qkv_proj and o_proj take the bias) and LlamaMLP (gate_up_proj and down_proj)."""
import copy

from gpu_garden.memory.llm.spec import from_config

from test_kv_kv54 import NAS_3


def test_nas_params_count_attention_and_mlp_biases_by_hand():
    cfg = copy.deepcopy(NAS_3)
    cfg["attention_bias"] = True
    cfg["mlp_bias"] = True
    s = from_config(cfg, "config.json")
    # without biases (test_kv_kv54): [7,342,080, 4,720,640, 4,719,616]
    # layer 0: q 16 x 64 = 1024, k and v 2 x 16 x 64 = 2048, o 1024 -> 4096; gate, up 2 x 1024, down 1024 -> 3072
    # layer 1: q 1024, k and v 2 x 2 x 64 = 256, o 1024 -> 2304; gate, up 2 x 768, down 1024 -> 2560
    # layer 2: no attention; gate, up 2 x 1536, down 1024 -> 4096
    layers = [7_342_080 + 4096 + 3072, 4_720_640 + 2304 + 2560, 4_719_616 + 4096]
    assert s.layer_params == layers == [7_349_248, 4_725_504, 4_723_712]
    assert s.params == 18_831_360 + 4096 + 3072 + 2304 + 2560 + 4096 == 18_847_488
    assert s.linear_params == 16_777_216      # biases are not matmul weights
