"""Task mm56: the vision towers vLLM 0.20.2 builds for Llama-4-Scout (mllama4.py), dots.ocr (dots_ocr.py) and
Gemma-4-E4B (gemma4_mm.py, with its audio tower), counted from each built-in config's vision_config, every figure by
hand (docs/kv-accuracy.md "Task mm56")."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gemma4_ple import audio_tower_params
from gpu_garden.memory.llm.runtimes import ollama as OL
from gpu_garden.memory.llm.runtimes import vllm_activation as VA
from support.towers import vllm_tower_bytes

# Llama-4-Scout's tower (34 layers x 1408, intermediate 5632, patch 14, image 336, projector_input_dim,
# projector_output_dim and vision_output_dim 4096, no projector bias; decoder hidden 5120), vLLM 0.20.2 mllama4.py:
#   a layer: qkv_proj + o_proj 4 x (1408^2 + 1408) = 7,935,488; fc1 1408 x 5632 + 5632 = 7,935,488; fc2 5632 x 1408
#     + 1408 = 7,931,264; two LayerNorms 4 x 1408 = 5632: 23,807,872; 34 layers 809,467,648
#   patch projection 3 x 14 x 14 x 1408 = 827,904 (no bias); class embedding 1408; positions ((336 / 14)^2 + 1) x 1408 =
#     577 x 1408 = 812,416; layernorm_pre and _post 4 x 1408 = 5632
#   vision_adapter fc1 5632 x 4096 = 23,068,672, fc2 4096 x 4096 = 16,777,216; multi_modal_projector 4096 x 5120 =
#     20,971,520
#   809,467,648 + 827,904 + 1408 + 812,416 + 5632 + 23,068,672 + 16,777,216 + 20,971,520 = 871,932,416 values
TOWER_SCOUT = 871_932_416
# Deliberate errors that break it: num_hidden_layers 32 or projector_input_dim 5632 in Llama-4-Scout-17B-16E.json's
# vision_config; the class token left out of llama4_tower's positions (+ 1); the llama4_vision_model branch taken out of
# projector() (the generic ViT: 576 positions, no adapter, a 1408 x 5120 projection).


def test_llama4_scout_tower_params_by_hand():
    s = llm.describe(model="meta-llama/Llama-4-Scout-17B-16E-Instruct")
    p = OL.projector(s)
    assert p["params"] == 34 * 23_807_872 + 827_904 + 1408 + 812_416 + 5632 + 23_068_672 + 16_777_216 + 20_971_520 \
        == TOWER_SCOUT
    assert not p["generic"]


# vLLM builds it beside the decoder (mllama4.py 760-772, quant_config=None: 16 bits); --language-model-only drops it
def test_vllm_loads_the_scout_tower_unless_language_model_only():
    extra, how = vllm_tower_bytes("meta-llama/Llama-4-Scout-17B-16E-Instruct", 8192)
    assert extra == 2 * TOWER_SCOUT == 1_743_864_832
    assert "+ 1.62 GiB of vision tower" in how  # 1,743,864,832 / 2^30 = 1.624


# dots.ocr's tower (42 layers of width 1536, SwiGLU intermediate 4224, patch 14, merge 2, merger out 1536, use_bias
# false, post_norm), vLLM 0.20.2 dots_ocr.py:
#   a block: qkv + proj 4 x 1536^2 = 9,437,184; fc13 + fc2 3 x 1536 x 4224 = 19,464,192; norm1, norm2 2 x 1536 = 3072:
#     28,904,448; 42 blocks 1,213,986,816
#   patch Conv2d 3 x 14 x 14 x 1536 = 903,168 + its bias 1536 + its RMSNorm 1536; post_trunk_norm 1536
#   merger: LayerNorm(1536) 3072; 6144 x 6144 + 6144 = 37,754,880; 6144 x 1536 + 1536 = 9,438,720
#   1,213,986,816 + 903,168 + 3 x 1536 + 3072 + 37,754,880 + 9,438,720 = 1,262,091,264 values
TOWER_DOTS = 1_262_091_264
# Deliberate errors that break it: intermediate_size 4224 -> 4096 or spatial_merge_size 1 in dots.ocr.json's
# vision_config; the conv bias or the merger's LayerNorm left out of dots_tower; the dots_ocr branch taken out of
# projector() (the generic ViT: 2 x 1536 x 4224 MLPs with biases, no merger).


def test_dots_ocr_tower_params_by_hand():
    s = llm.describe(model="rednote-hilab/dots.ocr")
    p = OL.projector(s)
    assert p["params"] == 42 * 28_904_448 + 903_168 + 3 * 1536 + 3072 + 37_754_880 + 9_438_720 == TOWER_DOTS
    assert not p["generic"]


# vLLM 0.11.1 printed "Model loading took 5.7174 GiB" for rednote-hilab/dots.ocr in bf16 (llm_measured.json row 689):
# the Qwen2 decoder (3.341 GiB) plus this tower, 2,524,182,528 B = 2.351 GiB: 5.692 GiB, -0.4 %
def test_vllm_weights_line_counts_the_dots_tower():
    extra, how = vllm_tower_bytes("rednote-hilab/dots.ocr", 131072)
    assert extra == 2 * TOWER_DOTS == 2_524_182_528
    assert "+ 2.35 GiB of vision tower" in how


# dots.ocr takes images only (dots_ocr.py:138-139): its profile is one image at its processor's largest size (task kv57:
# 11,289,600 pixels / 14^2 = 57,600 patches; it was Qwen2-VL's 12,845,056 here before), x 1536 x 32 B = 2,831,155,200 B
# at any max_model_len (at 131072 tokens Qwen2-VL's dummy video would be 7 temporal patches: 7 x that). Breaking it: the
# dots_ocr condition taken out of encoder_peak.
def test_dots_ocr_profile_is_one_image():
    s = llm.describe(model="rednote-hilab/dots.ocr")
    assert VA.encoder_peak(s, 131072) == 57_600 * 1536 * 32 == 2_831_155_200


# Gemma-4-E4B's towers (kv's gemma4_vision branch and audio_tower_params, the E2B's, at E4B's config and its 2560-wide
# decoder):
#   vision: 16 x (4 x 768 x 768 + 3 x 768 x 3072 + 4 x 768) = 16 x 9,440,256 = 151,044,096; patch 3 x 16^2 x 768 =
#     589,824; positions 2 x 10240 x 768 = 15,728,640; embed_vision 768 x 2560 = 1,966,080: 169,328,640
#   audio: a conformer block 2 x (8 x 1024^2 + 2 x 1024) + (5 x 1024^2 + 2 x 1024 + 128) + (3 x 1024^2 + 2 x 1024 +
#     5 x 1024) + 1024 = 16,781,312 + 5,245,056 + 3,152,896 + 1024 = 25,180,288, 12 of them 302,163,456; SSCP
#     9 x 128 + 128 + 9 x 128 x 32 + 32 + 32 x 32 x 1024 = 1,086,752 (128 mel bins -> 64 -> 32); output projection
#     1024 x 1536 + 1536 = 1,574,400; embed_audio 1536 x 2560 = 3,932,160: 308,756,768
TOWER_E4B, AUDIO_E4B = 169_328_640, 308_756_768
# Deliberate errors that break it: hidden_size 1152 (the 31B's tower) in Gemma-4-E4B.json's vision_config; its
# audio_config taken out (vLLM's weights then miss 617,513,536 B) or output_proj_dims 1024.


def test_gemma4_e4b_towers_by_hand():
    s = llm.describe(model="google/gemma-4-E4B-it")
    assert OL.projector(s)["params"] == 16 * 9_440_256 + 589_824 + 15_728_640 + 1_966_080 == TOWER_E4B
    assert audio_tower_params(s.audio, s.hidden) == 12 * 25_180_288 + 1_086_752 + 1_574_400 + 3_932_160 == AUDIO_E4B


# vLLM 0.19.2rc1 printed 15.16 GiB of model loading for google/gemma-4-E4B-it bf16 (row 516): the decoder as before
# (14.232 GiB, what --language-model-only leaves) plus both towers in bf16, 956,170,816 B = 0.8905 GiB: 15.123 GiB
def test_vllm_loads_both_e4b_towers():
    extra, how = vllm_tower_bytes("google/gemma-4-E4B-it", 16384)
    assert extra == 2 * (TOWER_E4B + AUDIO_E4B) == 956_170_816
