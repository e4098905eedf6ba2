"""Task kv57: the image vLLM 0.20.2's profile run puts through the vision tower for Llama 4 (its tiles) and dots.ocr (its
own processor's largest image), every figure by hand (docs/kv-accuracy.md "Task kv57"; notes in the task's kv57.md).
kv's encoder term is patches x the tower's width x 32 B (vllm_activation.ENCODER_BYTES_PER_HIDDEN)."""
import json

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.llm.runtimes import vllm_activation as VA
from support import cli_run


def _scout_config(**pre) -> dict:
    cfg = json.loads((llm_spec.MODELS_DIR / "Llama-4-Scout-17B-16E.json").read_text())
    cfg["preprocessor_config"] = pre
    return cfg


# Llama-4-Scout: the dummy image is 16 tiles tall, one wide (mllama4.py:576-584, max_patches 16), cut into a 16 x 1 grid
# plus a global tile (611-638: 1 + 16 x 1 = 17 tiles), each tile (336 / 14)^2 = 576 patches and a class token = 577 tokens
# through the 1408-wide tower (507-546): 17 x 577 = 9,809; 9,809 x 1408 = 13,811,072; x 32 = 441,954,304 B (0.41 GiB).
# Deliberate errors that break it: the old one-tile term (576 x 1408 x 32 = 25,952,256: the llama4 branch taken out of
# encoder_peak); no global tile (16 x 577: 415,956,992); the class token left out (17 x 576: 440,991,744).
def test_llama4_profile_image_is_sixteen_tiles_and_a_global_one():
    s = llm.describe(model="meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert VA.encoder_peak(s) == 441_954_304
    assert VA.encoder_peak(s, 8192) == 441_954_304  # no dummy video for Llama 4


# max_patches from the config's preprocessor_config: 4 tiles -> 4 + 1 global = 5 x 577 = 2,885; x 1408 = 4,062,080;
# x 32 = 129,986,560 B. One tile: no global tile (patches_per_image = 1 when r_h x r_w == 1): 577 x 1408 x 32 =
# 25,997,312 B. Breaking it: spec.py not reading max_patches (the default 16 tiles: 441,954,304 for both), or the global
# tile added to a single tile (2 x 577 x 1408 x 32 = 51,994,624).
def test_llama4_tiles_follow_max_patches():
    four = llm_spec.from_config(_scout_config(max_patches=4))
    assert four.vision["_max_tiles"] == 4
    assert VA.encoder_peak(four) == 129_986_560
    one = llm_spec.from_config(_scout_config(max_patches=1))
    assert VA.encoder_peak(one) == 25_997_312


# dots.ocr: its processor's max_pixels 11,289,600 (vLLM printed a budget of 14400 tokens for it) -> 11,289,600 // 28^2 =
# 14,400 merged tokens, 120 x 120 -> 3360 x 3360 px, 240 x 240 = 57,600 patches (qwen2_vl.py:914-965, 829-877), of the
# 1536-wide tower: 57,600 x 1536 = 88,473,600; x 32 = 2,831,155,200 B (2.64 GiB), was Qwen2-VL's 12,845,056 px:
# 65,536 x 1536 x 32 = 3,221,225,472 (3.00 GiB). Breaking it: the preprocessor_config block taken out of dots.ocr.json
# or spec.py reading only size.longest_edge (both give 3,221,225,472).
def test_dots_ocr_profile_image_is_its_processors_largest():
    s = llm.describe(model="rednote-hilab/dots.ocr")
    assert s.vision["_max_pixels"] == 11_289_600
    assert VA.encoder_peak(s, 131072) == 2_831_155_200


# the same through kv: on 24 GiB at 0.20.2 the encoder term is dots.ocr's largest activation (2,048 batched tokens by
# default on a card under 70 GiB), so kv's profile line is it: 2,831,155,200 B, "2.64 GiB" (was 3.00 GiB). Breaking it:
# as the test above.
def test_kv_prints_dots_ocr_profile_peak(capsys):
    out = cli_run.json_out(["kv", "--model", "rednote-hilab/dots.ocr", "--runtime", "vllm", "--vram", "24",
                            "--runtime-version", "0.20.2"], capsys)
    assert out["overhead"]["activation_profile"] == 2_831_155_200
    rc, text = cli_run.text(["kv", "--model", "rednote-hilab/dots.ocr", "--runtime", "vllm", "--vram", "24",
                             "--runtime-version", "0.20.2"], capsys)
    assert "activation profile     2.64 GiB" in text
