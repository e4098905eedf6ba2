"""hv15: HunyuanVideo 1.5 has its own family id (hunyuan-video-15), not the 13B's geometry, and the VAE advice names each
family's own VAE. Expected values are hand-computed from ComfyUI 0.8.0's source lines, not from the code under test.
Deliberate errors checked to fail: detect_family giving 1.5 "hunyuan-video" again (the old code); spec.FAMILY
"hunyuan-video-15" with s=8 (the 13B's spatial factor) or ch=16; vae_mismatch looking up FAMILY_FILES[fam] only (1.5's
advice then names no VAE); CONFIG_FAMILY "HunyuanVideo15" -> "hunyuan-video"."""
import pytest

from gpu_garden.memory.estimate import families, layouts, phases, spec
from gpu_garden.memory.units import MiB

HV15 = "hunyuan_video_hunyuanvideo1.5_720p_t2v_fp16"
HV13 = "hunyuan_video_hunyuan_video_t2v_720p_bf16"


def _dm(name):
    return next(c for c in families.split_components(layouts.table(name), name) if c["role"] == "diffusion_model")


def test_the_15_layout_is_its_own_family_and_the_13b_keeps_its_own():
    assert _dm(HV15)["family"] == "hunyuan-video-15"
    assert _dm(HV13)["family"] == "hunyuan-video"
    assert layouts.family_of("hunyuan-video-1.5") == "hunyuan-video-15"
    assert layouts.resolve("hunyuan-video-1.5") == ("family", "hunyuan-video-1.5")


@pytest.mark.parametrize("cls, fam", [("HunyuanVideo15", "hunyuan-video-15"),
                                      ("HunyuanVideo15_SR_Distilled", "hunyuan-video-15"),  # by the longest prefix
                                      ("HunyuanVideo", "hunyuan-video"), ("HunyuanVideoI2V", "hunyuan-video")])
def test_comfy_config_class_names_the_family(cls, fam):
    assert families.family_for_config(cls) == fam


def test_latent_at_the_default_size_from_the_source_factors():
    # comfy_extras/nodes_hunyuan.py:46-48 (inherited by EmptyHunyuanVideo15Latent, l.64): 848 x 480, length 25;
    # l.75: [B, 32, ((length - 1) // 4) + 1, height // 16, width // 16]
    #   T = (25 - 1) // 4 + 1 = 7, H = 480 // 16 = 30, W = 848 // 16 = 53
    assert spec.NATIVE_SIZE["hunyuan-video-15"] == (848, 480, 25)
    g = phases.latent_geometry("hunyuan-video-15", 848, 480, 25)
    assert g["shape"] == [1, 32, 7, 30, 53]
    # patch [1, 1, 1] (the file's img_in.proj.weight kernel, model_detection.py:143): 7 * 30 * 53 = 11130 tokens
    assert g["image_tokens"] == 11130
    # the 13B at the same size: 16 ch, 8x, patch 2: [1, 16, 7, 60, 106], 7 * 30 * 53 tokens too
    assert phases.latent_geometry("hunyuan-video", 848, 480, 25)["shape"] == [1, 16, 7, 60, 106]


def test_comfy_memory_required_uses_the_todo_factor():
    # supported_models.py:1461 memory_usage_factor = 4.0 #TODO; model_base memory_required (flash):
    # area 7 * 30 * 53 = 11130, x 2 bytes x 0.01 x 4.0 = 890.4 MiB
    got = phases.comfy_memory_required("hunyuan-video-15", {}, [1, 32, 7, 30, 53], 1)
    assert got == int(890.4 * MiB)


def test_vae_geometry_and_comfy_decode_heuristic():
    v = spec.VAE["hunyuan-video-15"]
    assert (v["s"], v["t"], v["dtypes"][0]) == (16, 4, "fp16")   # sd.py:490-496
    # sd.py:502: 3600 * 4 * H * W * 16 * 16 per dtype byte: 3600 * 4 * 30 * 53 * 256 = 5_861_376_000
    assert v["comfy"]([1, 32, 7, 30, 53]) == 5_861_376_000


def _comps(model, vae):
    return [dict(role="diffusion_model", table=layouts.table(model), source=model),
            dict(role="vae", table=layouts.table(vae), source=vae)]


@pytest.mark.parametrize("model, vae, have, want, advice", [
    (HV15, "vae_hunyuan_video_vae_bf16", 16, 32, "give its VAE (hunyuan_video_1.5_vae)"),
    (HV13, "vae_hunyuan_video_1.5_vae", 32, 16, "give its VAE (hunyuan_video_vae_bf16)"),
])
def test_vae_advice_names_each_familys_vae(model, vae, have, want, advice):
    why = families.vae_mismatch(_comps(model, vae))
    assert f"a {have}-channel VAE cannot decode" in why and f"{want}-channel latent" in why
    assert why.endswith(advice)


@pytest.mark.parametrize("model, vae", [(HV15, "vae_hunyuan_video_1.5_vae"), (HV13, "vae_hunyuan_video_vae_bf16")])
def test_matching_vaes_pass(model, vae):
    assert families.vae_mismatch(_comps(model, vae)) is None
