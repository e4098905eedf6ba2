"""Mechanism tuned on batch 22's vllm#18124 (a regression row now): V1 profiles a Qwen2-VL / Qwen2.5-VL model with
one item of the modality whose largest item has the most tokens, and at a long --max-model-len that is a video of up
to 16 frames at the largest image size (vLLM qwen2_vl.py get_num_frames_with_most_features, _MAX_FRAMES_PER_VIDEO;
gpu_model_runner.profile_run). Expected values are vLLM's own arithmetic and the thread's outcome."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm as V

GiB = 1 << 30


def test_dummy_video_temporal_patches():
    # one largest frame pair or image: 12845056 pixels / 28^2 = 16384 tokens. At 128000 tokens the video may use
    # 128000 - 16384 = 111616: 12 frames (6 pairs, 98304 tokens; 13 frames pad to 14 = 114688); 16 frames at most
    assert V.qwen_vl_video_grid_t(128000) == 6
    assert V.qwen_vl_video_grid_t(32768) == 1          # the image (16384 tokens) is as large as the video
    assert V.qwen_vl_video_grid_t(1 << 20) == 8        # _MAX_FRAMES_PER_VIDEO = 16 frames
    s = llm.describe(model="Qwen/Qwen2.5-VL-3B-Instruct")
    assert V.encoder_peak(s, 128000) == 6 * V.encoder_peak(s)


def test_qwen25vl_3b_refused_at_128000_on_03_of_an_a100():
    # vllm-project/vllm#18124 (0.8.5): Qwen2.5-VL-3B with its 128000-token context at --gpu-memory-utilization 0.3
    # of an 80 GB A100: "No available memory for the cache blocks"; one image's profile left ~14 GiB for the cache
    s = llm.describe(model="Qwen/Qwen2.5-VL-3B-Instruct")
    kw = dict(vram=79.25 * GiB, gpu_memory_utilization=0.3, gpu_name="NVIDIA A100 80GB", runtime_version="0.8.5")
    assert not llm.plan(s, "vllm", ctx=128000, **kw)["fits_as_requested"]
    assert llm.plan(s, "vllm", ctx=32768, **kw)["fits_as_requested"]
