"""Task kv59: V1's profile encodes N copies of its largest dummy item in one batch, not one (vLLM 0.20.2
gpu_model_runner.py:5815-5838, 5221-5248; encoder_budget.py:142-178 _get_max_items): N = max(1, min(budget // T,
max_num_seqs x max(1, max_model_len // T))), budget = max(max_num_batched_tokens, T), T the item's prompt tokens.
Every figure by hand (docs/kv-accuracy.md "Task kv59"; notes in the task's kv59.md). One item is patches x the tower's
width x 32 B (vllm_activation.ENCODER_BYTES_PER_HIDDEN)."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm_activation as VA


# Gemma 3 27B: a 896 px image, (896 / 14)^2 = 4,096 patches of the 1152-wide SigLIP, 4 x 4 pooled to 256 tokens (T).
# At 8192 batched tokens: 8192 // 256 = 32 items (the decoder cap 256 seqs x 131072 // 256 is far above); one item
# 4,096 x 1152 x 32 = 150,994,944 B, 32 items 4,831,838,208 B (4.50 GiB). Breaking it: items left at 1 (the old code:
# 150,994,944), T taken as the tower's patches (8192 // 4096 = 2 items: 301,989,888).
def test_gemma3_profile_encodes_32_images_at_8192_batched_tokens():
    s = llm.describe(model="google/gemma-3-27b-it")
    assert VA.item_tokens(s.vision, 4096, s.arch) == 256
    assert VA.encoder_peak(s, 131072, 8192, 256) == 32 * 150_994_944 == 4_831_838_208
    assert VA.encoder_peak(s, 131072) == 150_994_944  # no budget given (V0): one item


# the same in activation(): 0.19.0 at 8192 batched tokens and 1024 sequences. The forward: (3 x 21504 + 2 x 5376) x 2
# x 1.08 = 162,570 B a token x 8192 = 1.33 GB; the Triton sampler: 1024 x 262,208 x 4 x 3.85 = 4.13 GB; the encoder's
# 32 images 4,831,838,208 B are the peak. Breaking it: the encoder term called without max_batched (one image: the
# sampler's 4.13 GB wins).
def test_activation_takes_the_32_image_batch_under_v1():
    s = llm.describe(model="google/gemma-3-27b-it")
    assert VA.activation(s, 8192, 1024, (0, 19, 0), v1=True, max_model_len=131072) == 4_831_838_208


# the decoder's cap: max_num_seqs x max(1, max_model_len // T). One sequence at max_model_len 2048: 2048 // 256 = 8
# images, under the encoder budget's 32. An item larger than the budget still runs once: Qwen2.5-VL's 65,536 patches
# merged 2 x 2 are 16,384 tokens, budget max(8192, 16384) = 16384 -> 1 item. No item tokens known: 1. Breaking it: the
# cap taken out (32), the budget not raised to one item (8192 // 16384 = 0, floored to 1 by max(1, ...): the first
# assertion guards the cap; the third the 0 -> 1 floor).
def test_profile_items_caps():
    assert VA.profile_items(256, 8192, 1, 2048) == 8
    assert VA.profile_items(256, 8192, 256, 131072) == 32
    assert VA.profile_items(16384, 8192, 256, 32768) == 1
    assert VA.profile_items(0, 8192, 256, 32768) == 1


# Qwen3.6-35B-A3B: kv's dummy image since task kv64 is the processor's 16,777,216 px (the Qwen2-VL default's 12,845,056
# before) in 16 px patches = 65,536 patches of the 1152-wide tower (2,415,919,104 B), merged 2 x 2 to 16,384 tokens;
# 65536 // 16384 = 4 items: 9,663,676,416 B, the 4 its 0.23 log prints (5 of 12,544 tokens before kv64). At 8192: budget
# 16,384, 1. Breaking it: T as patches (65536 // 65536 = 1 item).
def test_qwen36_profile_items_at_65536():
    s = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    assert VA.encoder_peak(s, 262144, 65536, 256) == 4 * 2_415_919_104 == 9_663_676_416
    assert VA.encoder_peak(s, 262144, 8192, 256) == 2_415_919_104


# Llama 4 Scout: 17 tiles (kv57) of 576 patches, pixel-shuffled to 144 tokens a tile: T = 17 x 144 = 2,448. 8192 //
# 2448 = 3 items (1,325,862,912 B), 16384 // 2448 = 6 (2,651,725,824 B). Breaking it: the global tile left out of T
# (16 x 144 = 2,304: 16384 // 2304 = 7), or the class tokens counted (17 x 577 // 4 = 2,452: still 6; not guarded).
# Mistral-Small-3.1 (Pixtral 1540 px, 110 x 110 = 12,100 patches, 2 x 2 merged to 3,025 tokens): 8192 // 3025 = 2.
# Gemma 4 profiles a video (its logs), which kv does not size: one item kept (92,897,280 B for gemma-4-31B-it).
def test_llama4_pixtral_and_gemma4_item_counts():
    scout = llm.describe(model="meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert VA.encoder_peak(scout, 32768, 8192, 256) == 3 * 441_954_304 == 1_325_862_912
    assert VA.encoder_peak(scout, 32768, 16384, 256) == 6 * 441_954_304 == 2_651_725_824
    mistral = llm.describe(model="mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    assert VA.encoder_peak(mistral, 32768, 8192, 256) == 2 * 12_100 * 1024 * 32 == 792_985_600
    g4 = llm.describe(model="google/gemma-4-31B-it")
    assert VA.encoder_peak(g4, 32768, 8192, 256) == VA.encoder_peak(g4, 32768) == 92_897_280
