"""Task kv61: a Pixtral item's prompt tokens (T) and vLLM's --limit-mm-per-prompt in the profile's item count
(docs/kv-accuracy.md "Task kv61"; vLLM main at 6097afb9b, 2026-04-20). T is the item's [IMG] embeddings alone,
(side / (patch x spatial_merge_size))^2 (encoder_budget.py:15-41 get_num_embeds; pixtral.py:262-268), merge 1 unless the
config names one (pixtral.py:611, 1111-1114), 2 for a Mistral3 config. The item count is max(1, min(budget // T,
max_num_seqs x max(1, min(limit, max_model_len // T)))) (encoder_budget.py:140-180), a modality not given at 999
(config/multimodal.py:259-273), a modality at 0 not profiled and a tower with all of its modalities at 0 not built
(interfaces.py:249-288). One item is patches x the tower's width x 32 B (vllm_activation.ENCODER_BYTES_PER_HIDDEN).
Every figure below by hand."""
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm_activation as VA
from gpu_garden.memory.units import GiB

MISTRAL31 = "mistralai/Mistral-Small-3.1-24B-Instruct-2503"
E2B = "google/gemma-4-E2B-it"

# a Llava config with a Pixtral tower, as Pixtral-12B's HF upload is laid out: no spatial_merge_size at the top, the
# tower 1024 px in 16 px patches, 1024 wide (transformers' PixtralVisionConfig defaults); the decoder is Mistral-Nemo's
PIXTRAL_12B = {
    "model_type": "llava", "architectures": ["LlavaForConditionalGeneration"],
    "text_config": {"model_type": "mistral", "vocab_size": 131072, "hidden_size": 5120, "intermediate_size": 14336,
                    "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                    "max_position_embeddings": 1024000},
    "vision_config": {"model_type": "pixtral", "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
                      "num_attention_heads": 16, "image_size": 1024, "patch_size": 16},
    "torch_dtype": "bfloat16",
}


def _pixtral12b(tmp_path, **top):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(PIXTRAL_12B, **top)))
    return llm.describe(config=str(path))


# Pixtral-12B: (1024 / 16)^2 = 4,096 patches, no merger: T = 4,096 (kv59 took 4,096 / 4 = 1,024). At 8192 batched
# tokens, 256 sequences, max_model_len 32768: min(8192 // 4096 = 2, 256 x min(999, 32768 // 4096 = 8)) = 2 items of
# 4,096 x 1024 x 32 = 134,217,728 B: 268,435,456 B. Breaking it: the old T (8192 // 1024 = 8 items, 1,073,741,824 B).
# The same config naming spatial_merge_size 2 (as a Mistral3 config does) merges: T = 1,024.
def test_pixtral_12b_has_no_merger(tmp_path):
    s = _pixtral12b(tmp_path)
    assert s.vision["_merge"] == 1
    assert VA.item_tokens(s.vision, 4096, s.arch) == 4096
    assert VA.encoder_peak(s, 32768, 8192, 256) == 2 * 134_217_728 == 268_435_456
    assert VA.item_tokens(_pixtral12b(tmp_path, spatial_merge_size=2).vision, 4096) == 1024


# Mistral Small 3.1 (a Mistral3 config, Mistral3Config's merge 2): 1540 px / 14 = 110 x 110 = 12,100 patches, 55 x 55 =
# 3,025 tokens. Before vllm#16076 (0.8.3 and older) T counts a break token a row: 3,025 + 55 = 3,080. At 6100 batched
# tokens that is 6100 // 3080 = 1 item against 6100 // 3025 = 2; one item 12,100 x 1024 x 32 = 396,492,800 B. Breaking
# it: the row breaks counted at every version (1 item at 0.19.0), or never (2 at 0.8.3).
def test_mistral3_merges_two_by_two_and_old_builds_count_row_breaks():
    s = llm.describe(model=MISTRAL31)
    assert s.vision["_merge"] == 2
    assert VA.item_tokens(s.vision, 12100, s.arch, (0, 19, 0)) == 3025
    assert VA.item_tokens(s.vision, 12100, s.arch, (0, 8, 3)) == 3080
    assert VA.encoder_peak(s, 32768, 6100, 256, version=(0, 8, 3)) == 396_492_800
    assert VA.encoder_peak(s, 32768, 6100, 256, version=(0, 19, 0)) == 2 * 396_492_800


# the option as vLLM takes it: JSON from 0.10 (a count or {"count": N, ...}: config/multimodal.py's legacy and
# configurable forms) and image=N,video=M before (vllm#20969 removed it). A count below 0, a name kv does not read and a
# value that is no count are refused.
def test_limit_mm_per_prompt_forms():
    assert VA.mm_limits('{"image": 2, "video": {"count": 0, "num_frames": 8}}') == {"image": 2, "video": 0}
    assert VA.mm_limits("image=2,video=0") == {"image": 2, "video": 0}
    assert VA.mm_limits({"audio": 0}) == {"audio": 0}
    assert VA.mm_limits(None) == {} and VA.mm_limits({"image": {"width": 512}}) == {"image": 999}
    for bad in ('{"image": -1}', "image=two", '{"vision": 1}', '{"image": 2', "[1]"):
        with pytest.raises(UserError):
            VA.mm_limits(bad)


# Gemma 3 27B (T = 256, one image 150,994,944 B, test_kv_kv59) at 8192 batched tokens, 4 sequences, max_model_len
# 131072: unlimited min(32, 4 x min(999, 512)) = 32 items; image 2: min(32, 4 x 2) = 8 items, 1,207,959,552 B; image 0:
# no image is profiled and Gemma 3's tower takes images alone, so no encoder term. Breaking it: the limit not passed
# (32 items), or image 0 read as "no cap" (32).
def test_the_image_limit_caps_the_items_and_zero_skips_the_profile():
    s = llm.describe(model="google/gemma-3-27b-it")
    assert VA.encoder_peak(s, 131072, 8192, 4) == 32 * 150_994_944
    assert VA.encoder_peak(s, 131072, 8192, 4, {"image": 2}) == 8 * 150_994_944 == 1_207_959_552
    assert VA.encoder_peak(s, 131072, 8192, 4, {"image": 0}) == 0
    # through activation() at 8 sequences: 16 items, 2,415,919,104 B, above the forward's (3 x 21504 + 2 x 5376) x 2 x
    # 1.08 x 8192 = 1,331,775,406 B
    assert VA.activation(s, 8192, 8, (0, 20, 2), v1=True, max_model_len=131072, mm_limits={"image": 2}) == 2_415_919_104


# Qwen2.5-VL-7B (tower 1280 wide): a frame pair or an image at kv's dummy size is 12,845,056 // (14 x 14 x 4) = 16,384
# tokens, 65,536 patches (one image 65,536 x 1280 x 32 = 2,684,354,560 B). At max_model_len 65536 the video's room is
# 65536 - 16384 = 49,152 tokens beside one image: 6 frames, 3 temporal patches (8,053,063,680 B, one item at 8192
# batched tokens: the budget is one item's 49,152). image 0: no image beside it, 65,536 tokens: 8 frames, 4 patches
# (10,737,418,240 B). video 0: the image alone (2,684,354,560 B). Both 0: nothing.
def test_qwen25vl_video_and_image_limits():
    s = llm.describe(model="Qwen/Qwen2.5-VL-7B-Instruct")
    assert VA.qwen_vl_video_grid_t(65536) == 3 and VA.qwen_vl_video_grid_t(65536, images=0) == 4
    assert VA.encoder_peak(s, 65536, 8192, 256) == 3 * 2_684_354_560 == 8_053_063_680
    assert VA.encoder_peak(s, 65536, 8192, 256, {"image": 0}) == 4 * 2_684_354_560 == 10_737_418_240
    assert VA.encoder_peak(s, 65536, 8192, 256, {"video": 0}) == 2_684_354_560
    assert VA.encoder_peak(s, 65536, 8192, 256, {"image": 0, "video": 0}) == 0


def _t4(**kw):
    return llm.plan(llm.describe(model=E2B), "vllm", ctx=16384, weights_dtype="fp16", runtime_version="0.29.0",
                    vram=14.75 * GiB, gpu_name="Tesla T4", gpu_memory_utilization=0.9, max_num_seqs=8, **kw)


# Gemma-4-E2B on a T4 (test_kv_ellm58: vision tower 337,084,416 B; audio tower 307,183,904 values, 2 bytes each in 16
# bits): audio 0 drops the audio tower alone (614,367,808 B); image 0 keeps the vision tower (its video still goes
# through it); image, video and audio at 0 weigh what --language-model-only does. Breaking it: the limits not read (no
# change), or image 0 alone taken as the tower off.
def test_a_tower_with_all_its_modalities_at_zero_is_not_loaded():
    full = _t4()["weights"]
    assert full - _t4(limit_mm_per_prompt='{"audio": 0}')["weights"] == 2 * 307_183_904
    assert _t4(limit_mm_per_prompt='{"image": 0}')["weights"] == full
    off = _t4(limit_mm_per_prompt="image=0,video=0,audio=0")
    assert off["weights"] == _t4(language_model_only=True)["weights"] == full - 337_084_416 - 2 * 307_183_904
    assert any("every modality of the vision tower to 0" in n for n in off["notes"])


# the option is vLLM's: another runtime refuses it (plan_checks.READ_BY), and the plan's command repeats it as JSON
def test_the_option_is_vllm_only_and_printed_back():
    with pytest.raises(UserError):
        llm.plan(llm.describe(model=MISTRAL31), "llama.cpp", ctx=8192, vram=24 * GiB, limit_mm_per_prompt="image=1")
    r = llm.plan(llm.describe(model=MISTRAL31), "vllm", ctx=8192, vram=80 * GiB, runtime_version="0.19.0",
                 limit_mm_per_prompt="image=1")
    assert "--limit-mm-per-prompt '{\"image\":1}'" in r["command"]
