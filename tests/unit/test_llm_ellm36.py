"""Task ellm36 (kv-accuracy round 58): one description of the Qwen3.5 / 3.6 vision tower, Qwen3-VL's
(mmproj.qwen3vl_tower), for every runtime, each applying its own storage rule: vLLM and SGLang load it with the
weights at 16 bits (vLLM's qwen3_5.py builds qwen3_vl.py's Qwen3_VisionTransformer for both Qwen3.5 classes), Ollama
counts it as its projector at 16 bits, llama.cpp's --mmproj file stores some of it in F32 (round 57). Until round 58
vLLM, SGLang and Ollama counted a generic ViT instead (a 56 x 56 position table, a one-frame patch embedding, a
d x hidden projection and no merger): 421,863,408 values for Qwen3.6-27B, 843,726,816 bytes at 16 bits. Expected bytes
are derived by hand below."""
from dataclasses import replace

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

# Qwen3.6-27B's tower (vision_config: depth 27, hidden d 1152, ff 4304, patch 16, temporal_patch_size 2,
# spatial_merge_size 2, out_hidden_size 5120; num_position_embeddings absent: Qwen3_5VisionConfig's 2304):
#   27 blocks x (q k v o 4 x 1152^2 = 5,308,416 + their biases 4 x 1152 = 4,608 + fc1 fc2 2 x 1152 x 4304 = 9,916,416
#                + their biases 1152 + 4304 = 5,456 + two LayerNorms 4 x 1152 = 4,608) = 27 x 15,239,504 = 411,466,608
#   patch embedding Conv3d 3 x 2 x 16 x 16 x 1152 = 1,769,472 + its bias 1,152
#   position table 2304 x 1152 = 2,654,208
#   merger: LayerNorm on d 2 x 1152 = 2,304; linear_fc1 4d -> 4d (4d = 4608) 4608^2 + 4608 = 21,238,272;
#           linear_fc2 4608 x 5120 + 5120 = 23,598,080
#   = 411,466,608 + 1,769,472 + 1,152 + 2,654,208 + 2,304 + 21,238,272 + 23,598,080 = 460,730,096 values
QWEN36_27B_TOWER = 460_730_096
# Qwen3.6-35B-A3B: the same but linear_fc2 4608 x 2048 + 2048 = 9,439,232 (out_hidden_size 2048)
#   = 460,730,096 - 23,598,080 + 9,439,232 = 446,571,248 values
QWEN36_35B_TOWER = 446_571_248
# llama.cpp's BF16 mmproj file of the same tower (round 57's storage rule): 2 bytes a value, plus 2 more for each
# value stored in F32: the one-dimensional tensors (27 x 14,672 biases and norms = 396,144, the patch bias 1,152, the
# merger norm 2,304 and biases 4,608 + 5,120) = 409,328, the position table 2,654,208 and the patch embedding 1,769,472
QWEN36_27B_FILE = 2 * QWEN36_27B_TOWER + 2 * (409_328 + 2_654_208 + 1_769_472)   # 931,126,208 B


def _plan(spec, runtime, **kw):
    return llm.plan(spec, runtime, ctx=4096, vram=80 * GiB, **kw)


def test_vllm_loads_qwen3vl_tower_at_16_bits():
    spec = llm.describe(model="Qwen/Qwen3.6-27B")
    with_tower = _plan(spec, "vllm", weights_dtype="bf16")["weights"]
    # --language-model-only: vLLM builds no tower (kv drops it, plan._drop_tower_or_state)
    without = _plan(spec, "vllm", weights_dtype="bf16", language_model_only=True)["weights"]
    assert with_tower - without == 2 * QWEN36_27B_TOWER           # 921,460,192 B (843,726,816 as a generic ViT)
    moe = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    assert (_plan(moe, "vllm", weights_dtype="bf16")["weights"]
            - _plan(moe, "vllm", weights_dtype="bf16", language_model_only=True)["weights"]) == 2 * QWEN36_35B_TOWER


def test_sglang_builds_the_same_tower():
    spec = llm.describe(model="Qwen/Qwen3.6-27B")
    with_tower = _plan(spec, "sglang", weights_dtype="bf16")["weights"]
    without = _plan(replace(spec, vision=None), "sglang", weights_dtype="bf16")["weights"]
    assert with_tower - without == 2 * QWEN36_27B_TOWER


def test_ollama_projector_and_llamacpp_file_are_the_same_description():
    spec = llm.describe(model="Qwen/Qwen3.6-27B")
    assert _plan(spec, "ollama", weights_dtype="Q4_K_M")["projector"]["weights"] == 2 * QWEN36_27B_TOWER
    # the file differs only by its storage rule (F32 tensors), not by what it describes
    assert _plan(spec, "llama.cpp", weights_dtype="Q4_K_M", mmproj=True)["projector"]["weights"] == QWEN36_27B_FILE
