"""Task kv64: one tensor-parallel rank's share of vLLM's vision-tower profile term (docs/kv-accuracy.md "Task kv64").
Read in QuixiAI/SlimServe's vLLM history at 4b7f5ea1a, 01d4d1ad3 and a65f93fb2 (the same code at the three): the default
--mm-encoder-tp-mode is "weights" (config/multimodal.py:145), which builds Qwen3_VisionTransformer's qkv / proj
(qwen2_5_vl.py Qwen2_5_VisionAttention) and MLP fc1 / fc2 (qwen3_vl.py Qwen3_VisionMLP) as parallel layers; the pixel
values, pos_embeds, rotary cos / sin, layer norms, the residual stream and the RowParallel outputs are whole on each rank,
and vLLM's all-reduce is out of place (parallel_state.py:502-529). Per patch in 16-bit values, Qwen3.6-27B's tower
(hidden 1152, 16 heads of 72, intermediate 4304, 3 x 2 x 16 x 16 = 1,536 pixel values a patch), every figure by hand:
  held all along: 1,536 pixels + 1,152 pos_embeds + 72 rotary (cos and sin, 18 values for each of 2 axes) = 2,760
  t = 1: attention at proj 3 x 1152 (block input, norm1, proj output) + 8 x 1152 (qkv 3, qk copy 2, rotated 2, flash 1)
         = 12,672 against the MLP's 3 x 1152 + 2 x 4304 = 12,064: 2,760 + 12,672 = 15,432
  t = 2: attention 4 x 1152 (+ the all-reduce's copy) + 4 x 1152 = 9,216; MLP max(3456 + 4304, 3456 + 2152 + 2304) = 7,912:
         2,760 + 9,216 = 11,976
  t = 4: attention 4608 + 2304 = 6,912; MLP max(3456 + 2152, 3456 + 1076 + 2304) = 6,836: 2,760 + 6,912 = 9,672
The 1-GPU term stays 50,176 patches x 1152 x 32 B = 1,849,688,064 B (the fitted ENCODER_BYTES_PER_HIDDEN) for Qwen3.5-9B
(Qwen2-VL's 12,845,056-pixel default: no processor file); a rank's is that x peak(t) / peak(1). Step B: the Qwen3.6
built-ins take the processor's 16,777,216 pixels (row 1294 prints "a budget of 16384 tokens"): 65,536 patches a copy."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm_activation as VA

QWEN36_27B = "Qwen/Qwen3.6-27B"
QWEN35_9B = "Qwen/Qwen3.5-9B"   # the same tower (hidden 1152, 16 heads, intermediate 4304, 16-pixel patches)


def _profile(tp: int, model: str = QWEN35_9B, batched: int = 8192) -> int:
    res = llm.plan(llm.describe(model=model), runtime="vllm", ctx=32768, tensor_parallel_size=tp, max_num_seqs=2,
                   max_num_batched_tokens=batched, runtime_version="0.20.2")
    return res["overhead"]["activation_profile"]


def test_a_ranks_tower_values_by_hand():
    for model in (QWEN36_27B, QWEN35_9B):
        v = llm.describe(model=model).vision
        assert [VA.encoder_tp_values(v, t) for t in (1, 2, 4)] == [15_432, 11_976, 9_672]


# 1,849,688,064 x 11,976 / 15,432 = 1,435,449,990.6; x 9,672 / 15,432 = 1,159,291,274.9. At 8192 batched tokens and 2
# sequences the tower is the profile's largest term at every degree (one 12,544-token item: the budget is 12,544)
def test_the_profile_term_shrinks_with_the_ranks():
    assert _profile(1) == 50_176 * 1152 * 32 == 1_849_688_064
    assert _profile(2) == 1_435_449_990
    assert _profile(4) == 1_159_291_274


# a tower kv has not read under tensor parallelism keeps the 1-GPU term: Gemma 4's (transformers' AutoModel in vLLM's
# gemma4_mm.py, no parallel layer) and Gemma 3's SigLIP (not read)
def test_other_towers_stay_whole():
    for model in ("google/gemma-4-31B-it", "google/gemma-3-27b-it"):
        v = llm.describe(model=model).vision
        assert VA.encoder_tp_share(v, 2) == 1.0
        spec = llm.describe(model=model)
        assert VA.encoder_peak(spec, 32768, 8192, 2, tp=2) == VA.encoder_peak(spec, 32768, 8192, 2)


# step B: Qwen3.6-27B's copy is 65,536 patches: 65,536 x 1152 x 32 = 2,415,919,104 B at one GPU, x 11,976 / 15,432 =
# 1,874,873,457.1 at TP 2; at 65536 batched tokens 65536 // 16384 = 4 copies (5 of 12,544 tokens before), 4 x
# 2,415,919,104 = 9,663,676,416 B at one GPU
def test_qwen36_takes_its_processors_image():
    assert llm.describe(model=QWEN36_27B).vision["_max_pixels"] == 16_777_216
    assert _profile(1, QWEN36_27B) == 2_415_919_104
    assert _profile(2, QWEN36_27B) == 1_874_873_457
    assert _profile(1, QWEN36_27B, batched=65536) == 4 * 2_415_919_104 == 9_663_676_416
