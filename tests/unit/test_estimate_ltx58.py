"""ltx58: LTX-2 (ComfyUI 0.8.0 supported_models.LTXAV) has its own family id (ltx-2): its layout built from LTXAVModel,
its video and audio latents, its packed-latent memory_required and its block "av" (two streams, two peaks, the 1024-token
context). Expected values are hand-computed from ComfyUI 0.8.0's source lines, not from the code under test.
Deliberate errors checked to fail (each by reverting): detect_family giving LTX-2 "ltxv" again (the old code);
CONFIG_FAMILY "LTXAV" -> "ltxv"; no audio tokens (phases._with_audio returning the video geometry); memory_required over
T x H x W as for other families; AV_HIDDEN 3 (norm_vx left out); the context left out of av_bytes; the FeedForward peak
only (no max with the cross-attention's)."""
import pytest

from gpu_garden.memory.estimate import families, layouts, phases, spec
from gpu_garden.memory.units import MiB

LTX2 = "ltx-2_ltx-2-19b_bf16"


def _dm(name):
    return next(c for c in families.split_components(layouts.table(name), name) if c["role"] == "diffusion_model")


def test_the_layout_is_ltx2_with_both_streams():
    dm = _dm(LTX2)
    assert dm["family"] == "ltx-2"
    a = dm["arch"]
    # av_model.py:327-347 defaults: video 32 heads x 128 = 4096, audio 32 x 64 = 2048, FeedForward mult 4 (model.py:285)
    assert (a["block"], a["hidden"], a["ffn"], a["audio_hidden"], a["audio_ffn"], a["depth"]) == \
        ("av", 4096, 16384, 2048, 8192, 48)
    assert layouts.load(LTX2)["parameters"] == 18_876_174_592  # the published "19B"
    assert layouts.resolve("ltx-2") == ("family", "ltx-2")


@pytest.mark.parametrize("cls, fam", [("LTXAV", "ltx-2"), ("LTXV", "ltxv")])
def test_comfy_config_class_names_the_family(cls, fam):
    assert families.family_for_config(cls) == fam


def test_video_and_audio_latents_at_the_default_size():
    # nodes_lt.py:22-24 768 x 512, length 97; l.34 [B, 128, (97 - 1) // 8 + 1, 512 // 32, 768 // 32] = [1, 128, 13, 16, 24]
    assert spec.NATIVE_SIZE["ltx-2"] == (768, 512, 97)
    g = phases.latent_geometry("ltx-2", 768, 512, 97)
    assert g["shape"] == [1, 128, 13, 16, 24]
    # patch 1: 13 x 16 x 24 = 4992 video tokens. Audio (nodes_lt_audio.py:107,116 97 frames at 25 fps; audio_vae.py:235,
    # 271: ceil(97 / 25 x 16000 / 160 / 4) = ceil(97.0) = 97 latents; [B, 8, 97, 16], one token each)
    assert (g["image_tokens"], g["audio_tokens"], g["tokens"]) == (4992, 97, 4992 + 97)
    # the packed latent (utils.py:1182): 128 x 4992 + 8 x 97 x 16 = 638,976 + 12,416
    assert g["elements"] == 651_392


def test_comfyuis_memory_required_is_over_the_packed_latent():
    # model_base.py:378-379 area x 2 bytes x 0.01 x factor 0.055 (supported_models.py:848) MiB, area = B x 651,392 (the
    # packed [B, 1, N]: channels and audio included); cond and uncond batched: B = 2
    got = phases.comfy_memory_required("ltx-2", spec.DEFAULT_ARCH["ltx-2"], [1, 128, 13, 16, 24], 2)
    assert got == int(2 * 651_392 * 2 * 0.01 * 0.055 * MiB)  # 1433.06 MiB


def test_sample_activations_at_the_default_size_by_hand():
    # the FeedForward peak (phases.AV_*): per video token 4 d + 2 f + 2 d (v_pe) + 2 x 2048 (v_cross_pe)
    # = 4 + 8 + 2 + 1 = 15 units of 4096; per audio token 8 x 2048
    block = 4992 * 15 * 4096 + 97 * 8 * 2048                      # 308,297,728 elements per sample
    context = 1024 * (7680 * (4 + 2) + (4096 + 2048) * 2)       # fp32 input, bf16 cast, two projections: 58,368 B/token
    state = 651_392 * 4 * 6 + 651_392 * 2 * 4 * 2               # sampler's fp32 state, model in/out for B 2
    want = 2 * 2 * block + 2 * context + state                  # 1,378,784,256 (trace 1,361,370,136: +1.3 %)
    assert want == 1_378_784_256
    assert phases.sample_activation_bytes("ltx-2", [1, 128, 13, 16, 24], "bf16", cond_batch=2) == want


def test_small_size_peaks_at_the_text_cross_attention():
    # 320x192x9: [1, 128, 2, 6, 10], 120 video tokens; ceil(9 / 25 x 25) = 9 audio tokens. The FeedForward peak
    # (120 x 15 x 4096 + 9 x 8 x 2048 = 7,520,256) is below attn2's k_norm: 120 x (4 + 2 + 1) x 4096 + 9 x 5 x 2048
    # + 1024 x 3 x 4096 = 3,440,640 + 92,160 + 12,582,912 = 16,115,712 elements per sample
    elements = 128 * 2 * 6 * 10 + 8 * 9 * 16                    # 16,512
    want = 2 * 2 * 16_115_712 + 2 * 1024 * 58_368 + elements * 24 + elements * 2 * 4 * 2
    assert want == 184_660_992                                  # trace 184,562,584: +0.05 %
    assert phases.sample_activation_bytes("ltx-2", [1, 128, 2, 6, 10], "bf16", cond_batch=2) == want


def test_ltxv_keeps_its_own_geometry():
    # LTX-Video 0.9 (no audio_adaln_single) is still ltxv, without audio tokens
    dm = _dm("ltxv_ltx_video_2b_v0.9_bf16")
    assert dm["family"] == "ltxv" and dm["arch"]["block"] == "cross"
    assert phases.latent_geometry("ltxv", 768, 512, 97)["tokens"] == 4992


def test_ltxv_latent_nodes_name_no_single_family():
    # nodes_lt.py:34 makes LTX-2's video latent as well (latent_formats.py:410 LTXAV(LTXV)): a workflow sampling it with an
    # LTX-2 model is not told its latent is LTX-Video's (workflow.py's "makes a ... latent" note); length still // 8
    from gpu_garden.memory.estimate import latent_nodes
    for name in ("EmptyLTXVLatentVideo", "LTXVImgToVideo"):
        assert latent_nodes.LATENT_NODES[name].family is None and latent_nodes.LATENT_NODES[name].t == 8
