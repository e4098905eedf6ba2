"""Task kv63: --limit-mm-per-prompt's per-modality options size vLLM's dummy image (docs/kv-accuracy.md "Task kv63";
vLLM 0.23.1rc1.dev531+ga65f93fb2, read in QuixiAI/SlimServe's history). vllm#25631 (merged 2025-10-03) lets a modality's
value be {"count": N, "width": W, "height": H} (video: num_frames, width, height; audio: length), each above 0, no other
key (config/multimodal.py:17-45, extra="forbid"). _get_dummy_images cuts each side of the model's largest image to the
option (multimodal/processing/dummy_inputs.py:115-143); under the Qwen-VL rule the largest image is the processor's
max_pixels // (patch x merge)^2 merged tokens factored into the squarest pair within 200:1 (qwen2_vl.py:965-1016), and the
processor resizes the cut image with transformers 5.25.0's smart_resize (image_processing_qwen2_vl.py:63-89). The item's T
stays the processor's largest (get_mm_max_tokens_per_item, qwen2_vl.py:871-878), so the copy count does not change.
One copy is its patches x the tower's width x 32 B (vllm_activation.ENCODER_BYTES_PER_HIDDEN). Every figure by hand."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm_activation as VA
from gpu_garden.memory.units import GiB

QWEN35_4B = "Qwen/Qwen3.5-4B"          # preprocessor longest_edge 16,777,216, shortest_edge 65,536, patch 16, merge 2
QWEN25_VL_7B = "Qwen/Qwen2.5-VL-7B-Instruct"  # no processor file: 12,845,056 / 3,136 pixels, patch 14, merge 2


# the options apart from the count: kept per modality, printed back as vLLM takes them, refused where vLLM refuses
# them (a key the modality's options class does not have, a value not above 0)
def test_the_options_are_read_apart_from_the_count():
    value = '{"image": {"count": 1, "width": 512, "height": 512}, "video": 0}'
    assert VA.mm_limits(value) == {"image": 1, "video": 0}
    assert VA.mm_dummy(value) == {"image": {"width": 512, "height": 512}}
    assert VA.mm_limit_json(value) == {"image": {"count": 1, "width": 512, "height": 512}, "video": 0}
    assert VA.mm_dummy({"video": {"count": 1, "num_frames": 8}, "audio": {"length": 16000}}) == {
        "video": {"num_frames": 8}, "audio": {"length": 16000}}
    assert VA.mm_limits({"image": {"width": 512}}) == {"image": 999}
    assert VA.mm_dummy("image=2,video=0") == {}
    for bad in ({"image": {"count": 1, "num_frames": 8}}, {"audio": {"width": 5}}, {"image": {"width": 0}},
                {"image": {"height": "512"}}):
        with pytest.raises(UserError):
            VA.mm_dummy(bad)


# transformers' smart_resize by hand. (700, 1000) at factor 28: round(25) x 28 = 700, round(35.71) = 36 x 28 = 1008;
# 705,600 pixels lie between 3,136 and 12,845,056. (100, 200) at 32 with 65,536 at least: 96 x 192 = 18,432 is below,
# beta = sqrt(65536 / 20000) = 1.8102, ceil(5.657) = 6 x 32 = 192 and ceil(11.31) = 12 x 32 = 384. (4096, 8192) at 32
# with 16,777,216 at most: 33,554,432 is above, beta = sqrt(2), floor(90.51) = 90 x 32 = 2880, floor(181.02) = 181 x 32
# = 5792 (16,680,960 pixels). Past 200:1 the processor refuses the image.
def test_smart_resize():
    assert VA.qwen_vl_smart_resize(700, 1000, 28, 3136, 12_845_056) == (700, 1008)
    assert VA.qwen_vl_smart_resize(100, 200, 32, 65536, 16_777_216) == (192, 384)
    assert VA.qwen_vl_smart_resize(4096, 8192, 32, 65536, 16_777_216) == (2880, 5792)
    with pytest.raises(UserError):
        VA.qwen_vl_smart_resize(4096, 16, 32, 65536, 16_777_216)


# the dummy image's patches. Qwen3.5-4B: 16,777,216 // 32^2 = 16,384 tokens = 128 x 128, a 4096 x 4096 image; cut to
# 512 x 512 it stays 512 x 512, 32 x 32 = 1,024 patches; cut to 200 x 100 it is resized up to 384 x 192, 24 x 12 = 288.
# Qwen2.5-VL-7B: 12,845,056 // 28^2 = 16,384 tokens, a 3584 x 3584 image; 1000 x 700 becomes 1008 x 700, 72 x 50 = 3,600
# patches; width 512 alone gives 512 x 3584, resized to 504 x 3584, 36 x 256 = 9,216. No option: the whole image, the
# 65,536 patches kv took before. A width of 16 against 4096 is past 200:1.
def test_the_dummy_image_cut_to_the_options():
    s4 = llm.describe(model=QWEN35_4B)
    assert (s4.vision["_max_pixels"], s4.vision["_min_pixels"]) == (16_777_216, 65536)
    assert VA.qwen_vl_dummy_patches(s4.vision, 512, 512) == 1024
    assert VA.qwen_vl_dummy_patches(s4.vision, 200, 100) == 288
    assert VA.qwen_vl_dummy_patches(s4.vision) == 65536
    q = llm.describe(model=QWEN25_VL_7B)
    assert VA.qwen_vl_dummy_patches(q.vision, 1000, 700) == 3600
    assert VA.qwen_vl_dummy_patches(q.vision, 512) == 9216
    assert VA.qwen_vl_dummy_patches(q.vision) == 65536
    with pytest.raises(UserError):
        VA.qwen_vl_dummy_patches(s4.vision, 16)


# Qwen3.5-4B (tower 1024 wide) at max_model_len 65536, 16 sequences. At 4096 batched tokens one copy (T = 16,384 is the
# budget): 65,536 x 1024 x 32 = 2,147,483,648 B, or at 512 x 512 1,024 x 1024 x 32 = 33,554,432 B. At 65536 batched
# tokens T stays 16,384, so 65536 // 16384 = 4 copies either way: 4 x 33,554,432 = 134,217,728 B. Breaking it: T taken
# from the cut image (256 tokens: 65536 // 256 = 256 copies), or the options ignored.
def test_the_options_shrink_each_copy_not_the_count():
    s4 = llm.describe(model=QWEN35_4B)
    cut = {"image": {"width": 512, "height": 512}}
    assert VA.encoder_peak(s4, 65536, 4096, 16, {}, (0, 29, 0)) == 2_147_483_648
    assert VA.encoder_peak(s4, 65536, 4096, 16, {}, (0, 29, 0), cut) == 33_554_432
    assert VA.encoder_peak(s4, 65536, 65536, 16, {}, (0, 29, 0), cut) == 4 * 33_554_432 == 134_217_728


# where the image is not the item kv sizes, or the tower keeps its size: Qwen2.5-VL-7B at max_model_len 65536 profiles a
# video (3 temporal patches x 65,536 x 1280 x 32 = 8,053,063,680 B, test_kv_kv61), which the image options do not touch;
# Gemma 4 31B pads every image to max_soft_tokens x 3^2 = 2,520 patches (one item, 2,520 x 1152 x 32 = 92,897,280 B)
def test_other_items_keep_their_size():
    q = llm.describe(model=QWEN25_VL_7B)
    assert VA.encoder_peak(q, 65536, 8192, 256, {}, None, {"image": {"width": 512, "height": 512}}) == 8_053_063_680
    g = llm.describe(model="google/gemma-4-31B-it")
    assert VA.encoder_peak(g, 8192, 8192, 4, {"video": 0}, (0, 23), {"image": {"width": 100, "height": 100}}) \
        == VA.encoder_peak(g, 8192, 8192, 4, {"video": 0}, (0, 23)) == 92_897_280


# through the plan: vLLM 0.29.0, Qwen3.5-4B, 4096 batched tokens, 16 sequences. Without options the profile is the
# encoder's 2,147,483,648 B; with 512 x 512 the forward's 4096 x (3 x 9216 + 2 x 2560) x 2 x 1.08 = 289,910,292 B is
# the larger (the copy is 33,554,432 B, the Triton sampler's 16 x 248,320 x 4 x 3.85 = 61,186,048 B). The command
# repeats the options.
def test_the_plan_reads_the_options_and_prints_them_back():
    def plan(**kw):
        return llm.plan(llm.describe(model=QWEN35_4B), "vllm", ctx=65536, vram=48 * GiB, runtime_version="0.29.0",
                        max_num_batched_tokens=4096, max_num_seqs=16, **kw)
    assert plan()["overhead"]["activation_profile"] == 2_147_483_648
    r = plan(limit_mm_per_prompt='{"image": {"count": 2, "width": 512, "height": 512}}')
    assert r["overhead"]["activation_profile"] == 289_910_292
    assert "--limit-mm-per-prompt '{\"image\":{\"count\":2,\"width\":512,\"height\":512}}'" in r["command"]
