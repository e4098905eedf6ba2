"""Task vis36: Qwen3-VL-235B-A22B's vision tower (vLLM 0.20.2 qwen3_vl_moe.py builds self.visual =
Qwen3_VisionTransformer from the config's vision_config under _mark_tower_model), counted from the built-in config's
vision_config, each figure by hand."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import ollama as OL
from support.towers import vllm_tower_bytes

# Qwen3-VL-235B-A22B's tower (depth 27, hidden 1152, intermediate 4304, 16 heads, patch 16, temporal 2, merge 2, out
# 4096, 2304 positions, deepstack mergers after blocks 8, 16 and 24), vLLM 0.20.2 qwen3_vl.py's modules:
#   a block: qkv 1152 x 3456 + 3456, proj 1152 x 1152 + 1152 (4 x 1152^2 + 4 x 1152 = 5,313,024), linear_fc1
#     1152 x 4304 + 4304, linear_fc2 4304 x 1152 + 1152 (2 x 1152 x 4304 + 4304 + 1152 = 9,921,872), norm1 and norm2
#     2 x 2 x 1152 = 4608: 15,239,504; 27 blocks 411,466,608
#   patch_embed Conv3d 3 x 2 x 16 x 16 x 1152 = 1,769,472 + bias 1152; pos_embed 2304 x 1152 = 2,654,208
#   a merger on 4 x 1152 = 4608: linear_fc1 4608 x 4608 + 4608 = 21,238,272, linear_fc2 4608 x 4096 + 4096 =
#     18,878,464: 40,116,736, four of them (the output's and three deepstack) 160,466,944
#   the output merger's LayerNorm(1152) 2304; each deepstack merger's LayerNorm(4608) 9216, three 27,648
#   411,466,608 + 1,770,624 + 2,654,208 + 160,466,944 + 2304 + 27,648 = 576,388,336 values, 1,152,776,672 B in bf16
TOWER_235B = 576_388_336
# Deliberate errors that break it: out_hidden_size 5120 (Qwen3-VL-32B's) or deepstack_visual_indexes [] in
# Qwen3-VL-235B-A22B.json's vision_config, or the vision_config taken out (no tower at all).


def test_qwen3_vl_235b_tower_params_by_hand():
    s = llm.describe(model="Qwen/Qwen3-VL-235B-A22B-Instruct")
    assert OL.projector(s)["params"] == 27 * 15_239_504 + 1_770_624 + 2_654_208 + 4 * 40_116_736 + 2304 + 27_648 \
        == TOWER_235B


# vLLM's weights: the decoder's 235.09 B values (test_llm_batch30's geometry; here taken as the plan without the tower,
# --language-model-only) plus this tower in bf16; the weights line names it.
def test_vllm_loads_the_235b_tower():
    extra, how = vllm_tower_bytes("Qwen/Qwen3-VL-235B-A22B-Instruct", 32768)
    # since kv65 with the tower comes the deepstack buffer (plan_weights.DEEPSTACK_BUFFER): 3 levels x `vllm serve`'s
    # 2048 batched tokens on a card kv does not know x the decoder's 4096 x 2 B = 50,331,648
    assert extra == 2 * TOWER_235B + 3 * 2048 * 4096 * 2 == 1_152_776_672 + 50_331_648
    assert "+ 1.07 GiB of vision tower" in how  # 1,152,776,672 / 2^30 = 1.0736


# vLLM's profile runs the tower on one dummy image of the processor's size.longest_edge pixels (qwen2_vl.py
# get_image_size_with_most_features, via qwen3_vl.py get_dummy_mm_data): Qwen3.5-4B's preprocessor_config says
# 16,777,216 -> 16,777,216 / (16 x 2)^2 = 16,384 merged tokens = 65,536 patches of 16 x 16; the encoder term is
# 65,536 x 1024 (hidden) x 32 B = 2,147,483,648 B = 2.00 GiB (vLLM 0.29.0 printed a 2.20 GiB profile peak, batch 121).
# A Qwen 3.5 config without the field keeps Qwen2-VL's 12,845,056 pixels: Qwen3.5-9B 50,176 x 1152 x 32 = 1,849,688,064.
# Breaking it: longest_edge 12845056 in Qwen3.5-4B.json, the field taken out, or spec.from_config not carrying it
# (the first assertion); encoder_peak reading the field for every model (the second cannot break that way: it guards
# the default).
def test_qwen35_4b_profile_image_is_the_preprocessors_longest_edge():
    from gpu_garden.memory.llm.runtimes import vllm_activation as VA
    assert VA.encoder_peak(llm.describe(model="Qwen/Qwen3.5-4B")) == 65_536 * 1024 * 32 == 2_147_483_648
    assert VA.encoder_peak(llm.describe(model="Qwen/Qwen3.5-9B")) == 50_176 * 1152 * 32 == 1_849_688_064


# Qwen3.5-2B's tower (depth 24, hidden 1024, intermediate 4096, 16 heads, patch 16, temporal 2, merge 2, out 2048,
# 2304 positions, no deepstack; vision model_type qwen3_5_vision as transformers 5.x writes it), vLLM 0.20.2's modules:
#   a block 12,596,224 as the 4B's (test_kv_vis35), 24 blocks 302,309,376; patch_embed 1,572,864 + 1024;
#   pos_embed 2304 x 1024 = 2,359,296; merger LayerNorm(1024) 2048, linear_fc1 4096 x 4096 + 4096 = 16,781,312,
#   linear_fc2 4096 x 2048 + 2048 = 8,390,656
#   302,309,376 + 1,573,888 + 2,359,296 + 2048 + 16,781,312 + 8,390,656 = 331,416,576 values, 662,833,152 B in bf16
TOWER_2B = 331_416_576
# Deliberate errors that break it: out_hidden_size 2560 (the 4B's) or depth 27 in Qwen3.5-2B.json's vision_config;
# qwen3_5_vision left out of mmproj.QWEN3VL_TOWERS (the generic ViT prices it: no merger, a 4,096-patch table).


def test_qwen35_2b_tower_params_by_hand():
    s = llm.describe(model="Qwen/Qwen3.5-2B")
    p = OL.projector(s)
    assert p["params"] == 24 * 12_596_224 + 1_573_888 + 2_359_296 + 2048 + 16_781_312 + 8_390_656 == TOWER_2B
    assert not p["generic"]


# vLLM 0.29.0 printed model loading 4.25 GiB for Qwen/Qwen3.5-2B bf16 without a draft (llm_measured.json row 1379):
# the decoder as before (3.536 GiB) plus this tower, 662,833,152 B = 0.617 GiB; --language-model-only drops it.
def test_vllm_loads_the_2b_tower_unless_language_model_only():
    s = llm.describe(model="Qwen/Qwen3.5-2B")
    kw = dict(ctx=262144, weights_dtype="bf16", kv_dtype="fp8", runtime_version="0.29.0")
    r = llm.plan(s, "vllm", **kw)
    lmo = llm.plan(s, "vllm", language_model_only=True, **kw)
    assert r["weights"] - lmo["weights"] == 2 * TOWER_2B == 662_833_152
