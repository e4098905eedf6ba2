"""lay53: the bundled layouts of Chroma, HiDream I1 and HunyuanVideo 1.5 (memory/estimate/layouts/README.md): the names
users type resolve to them and to their family's files, and each layout's size is the published one or is counted
here by hand from its config. Deliberate errors checked to fail: a FAMILY_FILES entry naming another family
(hunyuan-video-1.5 -> hunyuan-image), and a layout with one block dropped (Chroma's single_blocks.37)."""
import json
import math

import pytest

from gpu_garden.memory.estimate import families, layouts, report

NEW = {  # layout -> (family families.detect_family gives it, FAMILY_FILES entry)
    "chroma_chroma-unlocked-v2": ("chroma", "chroma"),
    "hidream_hidream_i1_full_fp16": ("hidream", "hidream"),
    "hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16": ("hunyuan-video-15", "hunyuan-video-1.5"),
}


@pytest.mark.parametrize("typed, hit", [
    ("chroma", ("family", "chroma")),
    ("chroma-unlocked-v2", ("layout", "chroma_chroma-unlocked-v2")),
    ("hidream", ("family", "hidream")),
    ("hidream_i1_full_fp16", ("layout", "hidream_hidream_i1_full_fp16")),
    ("hidream_i1_dev_bf16", ("family", "hidream")),           # the dev and fast files: the same class in ComfyUI 0.8.0
    ("hidream_i1_fast_bf16.safetensors", ("family", "hidream")),
    ("hunyuan_video_1.5", ("family", "hunyuan-video-1.5")),
    ("HunyuanVideo1.5", ("family", "hunyuan-video-1.5")),
    ("hunyuanvideo1.5_720p_t2v_fp16", ("layout", "hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16")),
])
def test_typed_names_resolve(typed, hit):
    assert layouts.resolve(typed) == hit


def test_every_entry_names_a_family_its_model_is_detected_as():
    for entry, files in layouts.FAMILY_FILES.items():
        fam = layouts.family_of(entry)
        assert fam in families.FAMILIES
        comps = families.split_components(layouts.table(files["model"]))      # a checkpoint's (sd1, sdxl) holds more
        assert next(c for c in comps if c["role"] == "diffusion_model")["family"] == fam, entry
        assert {files["model"], files["vae"], *files["te"]} <= set(layouts.names()), entry
    for lay, (fam, entry) in NEW.items():
        assert layouts.FAMILY_FILES[entry]["model"] == lay and layouts.family_of(entry) == fam


@pytest.mark.parametrize("typed, want", [
    ("chroma", ["chroma_chroma-unlocked-v2", "te_t5xxl_fp16", "vae_flux_ae"]),
    ("hidream_i1_dev_bf16", ["hidream_hidream_i1_full_fp16", "te_t5xxl_fp16", "vae_flux_ae"]),
    ("hunyuanvideo1.5_720p_t2v_fp16", ["hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16", "vae_hunyuan_video_1.5_vae"]),
])
def test_a_name_brings_the_usual_encoders_and_vae(typed, want):
    comps, notes = report.components([typed])
    assert sorted({c["source"].removesuffix(" (bundled)") for c in comps}) == want
    dm = next(c for c in comps if c["role"] == "diffusion_model")
    assert dm["family"] == NEW[want[0]][0]
    if "hidream" in typed or "hunyuan" in typed:          # their LLM encoders have no bundled layout: said, not counted
        assert any("has no bundled layout" in n for n in notes)


def _file_bytes(name):
    """The size of the layout written as a safetensors file: 8 + its header + its data."""
    blob = len(json.dumps(layouts.safetensors_header(layouts.load(name)), separators=(",", ":")).encode())
    return 8 + blob + (-blob % 8) + layouts.load(name)["total_bytes"]


def test_chroma_is_the_published_file_to_the_byte():
    # lodestones/chroma-debug-development-only chroma-unlocked-v2.safetensors: LFS pointer size 17800038288
    assert _file_bytes("chroma_chroma-unlocked-v2") == 17_800_038_288


def test_hidream_is_the_listed_size():
    # Comfy-Org/HiDream-I1_ComfyUI lists hidream_i1_full_fp16.safetensors (and dev/fast bf16) as 34.2 GB; one block
    # of 48 is about 0.7 GB
    assert round(_file_bytes("hidream_hidream_i1_full_fp16") / 1e9, 1) == 34.2


def _params(name, prefix=""):
    return sum(math.prod(t["shape"]) for k, t in layouts.load(name)["tensors"].items() if k.startswith(prefix))


def _blocks(name, part):
    return len({k.split(".")[1] for k in layouts.load(name)["tensors"] if k.startswith(part + ".")})


def test_block_sizes_counted_by_hand():
    # Chroma, hidden H = 3072, MLP 4H, qkv with bias, q/k RMSNorm scales of the 128-wide head, no per-block modulation
    # (its distilled guidance layer gives it): a double block is img + txt, each qkv 3H*H + 3H, norms 2*128,
    # proj H*H + H, mlp H*4H + 4H and 4H*H + H: 2 * (12H^2 + 9H + 256) = 2 * (113_246_208 + 27_648 + 256)
    H = 3072
    assert _params("chroma_chroma-unlocked-v2", "double_blocks.0.") == 2 * (12 * H * H + 9 * H + 256) == 226_548_224
    # a single block: linear1 H -> 3H + 4H with bias, linear2 5H -> H with bias, norms 2*128: 12H^2 + 8H + 256
    assert _params("chroma_chroma-unlocked-v2", "single_blocks.0.") == 12 * H * H + 8 * H + 256
    assert (_blocks("chroma_chroma-unlocked-v2", "double_blocks"), _blocks("chroma_chroma-unlocked-v2", "single_blocks")) \
        == (19, 38)
    # HunyuanVideo 1.5, H = 2048 (16 heads of 128), 54 double blocks and no single one: each half adds a 6H modulation
    # (H*6H + 6H) to the above: 2 * (18H^2 + 15H + 256) = 2 * (75_497_472 + 30_720 + 256)
    H = 2048
    hv = "hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16"
    assert _params(hv, "double_blocks.0.") == 2 * (18 * H * H + 15 * H + 256) == 151_056_896
    assert (_blocks(hv, "double_blocks"), _blocks(hv, "single_blocks")) == (54, 0)
    # its VAE: a decoder resnet at C = 1024 channels, two causal 3x3x3 convolutions with bias and two RMS gammas:
    # 2 * (27C^2 + C) + 2C = 54C^2 + 4C
    C = 1024
    assert _params("vae_hunyuan_video_1.5_vae", "decoder.up.0.block.0.") == 54 * C * C + 4 * C == 56_627_200
    assert layouts.load("vae_hunyuan_video_1.5_vae")["tensors"]["decoder.conv_in.conv.weight"]["shape"][1] == 32
