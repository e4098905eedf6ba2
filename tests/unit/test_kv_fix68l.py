"""Review rev68e's findings on fix68e (`gpu-garden kv`, issue 15 item 6), one test block per finding."""
from support.cli_run import flat, json_out, run, unwrap  # noqa: F401

GIB = 2**30


# 1. Qwen's published Qwen2.5-VL-7B-Instruct config.json (transformers 4.41.2's vision_config) names no model_type in
# its vision_config and gives intermediate_size 3420: the tower was priced as the generic ViT (0.50 B values).
PUBLISHED_Q25VL_VISION = {"depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420,
                          "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
                          "spatial_merge_size": 2, "spatial_patch_size": 14, "window_size": 112,
                          "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2, "temporal_patch_size": 2}


def test_qwen25vl_published_vision_config_without_model_type():
    from dataclasses import replace
    from gpu_garden.memory.llm.names import load_builtin
    from gpu_garden.memory.llm.runtimes.ollama import projector
    p = projector(replace(load_builtin("Qwen2.5-VL-7B"), vision=dict(PUBLISHED_Q25VL_VISION)))
    # 8.29 B checkpoint parameters less the decoder's 7.62 B: about 0.67 B for the tower
    assert abs(p["params"] / 0.67e9 - 1) < 0.03 and not p["generic"]
