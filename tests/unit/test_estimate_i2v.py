"""Wan 2.1 image-to-video as an input: the I2V DiT's own tensors (from its file: img_emb, k_img / v_img / norm_k_img,
the 36-channel patch embedding, as ComfyUI's comfy/ldm/wan/model.py builds model_type 'i2v') and the CLIP-H image
encoder (open-clip ViT-H/14 vision tower, 632,076,800 parameters, fp16) counted with the encoders. Counts written out
from the layer shapes; dropping the image encoder, counting it twice or in fp32 breaks a test here."""
import argparse
import math

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, image_encoder as IE, layouts, report

CLIP_H = (1280 * 3 * 14 * 14 + 1280 + 257 * 1280 + 4 * 1280 + 1024 * 1280
          + 32 * (4 * (1280 * 1280 + 1280) + 4 * 1280 + (5120 * 1280 + 5120) + (1280 * 5120 + 1280)))


_table = layouts.table


def _wan14b(i2v):
    d, ffn = 5120, 13824
    t = {"patch_embedding.weight": (d, 36 if i2v else 16, 1, 2, 2), "patch_embedding.bias": (d,),
         "text_embedding.0.weight": (d, 4096), "text_embedding.2.weight": (d, d), "time_embedding.0.weight": (d, 256),
         "time_embedding.2.weight": (d, d), "time_projection.1.weight": (6 * d, d), "head.head.weight": (64, d),
         "head.modulation": (1, 2, d)}
    for i in range(40):
        b = f"blocks.{i}"
        t.update({f"{b}.{a}.{n}.weight": (d, d) for a in ("self_attn", "cross_attn") for n in "qkvo"})
        t.update({f"{b}.ffn.0.weight": (ffn, d), f"{b}.ffn.2.weight": (d, ffn), f"{b}.modulation": (1, 6, d)})
        if i2v:
            t.update({f"{b}.cross_attn.k_img.weight": (d, d), f"{b}.cross_attn.k_img.bias": (d,),
                      f"{b}.cross_attn.v_img.weight": (d, d), f"{b}.cross_attn.v_img.bias": (d,),
                      f"{b}.cross_attn.norm_k_img.weight": (d,)})
    if i2v:
        t.update({"img_emb.proj.0.weight": (1280,), "img_emb.proj.0.bias": (1280,), "img_emb.proj.1.weight": (1280, 1280),
                  "img_emb.proj.1.bias": (1280,), "img_emb.proj.3.weight": (d, 1280), "img_emb.proj.3.bias": (d,),
                  "img_emb.proj.4.weight": (d,), "img_emb.proj.4.bias": (d,)})
    return {k: ("BF16", s) for k, s in t.items()}


def _comps(i2v, extra=()):
    return (families.split_components(_wan14b(i2v), "wan21")
            + [c for n in ("te_umt5_xxl_fp16", "vae_wan_2.1_vae") for c in families.split_components(_table(n), n)]
            + list(extra))


def _est(i2v_layout, extra=(), **pol):
    return E.estimate(_comps(i2v_layout, extra), 832, 480, 81, cfg=False,
                      policy=dict({"_no_knobs": True, "models": "resident", "text_encoders": "resident"}, **pol))


def test_clip_vision_h_layout_and_detection():
    t = IE.clip_vision_h()
    assert sum(math.prod(s) for _, s in t.values()) == CLIP_H == 632_076_800
    (c,) = families.split_components(t, "clip_vision_h.safetensors")
    assert (c["role"], c["kind"], c["bytes"]) == ("text_encoder", "clip-vision-h", 2 * CLIP_H)


def test_i2v_layout_adds_the_clip_h_encoder_once():
    t2v, i2v = _est(False), _est(True)
    dm = next(c for c in i2v["_ctx"]["components"] if c["role"] == "diffusion_model")
    assert dm["variant"] == "i2v 14B"
    # the DiT's own I2V tensors: 40 x (2 x (5120^2 + 5120) + 5120) + img_emb + 20 more input channels, bf16
    extra_dm = 40 * (2 * (5120 * 5120 + 5120) + 5120) + (2 * 1280 + 1280 * 1280 + 1280 + 5120 * 1280 + 5120 + 2 * 5120) \
        + 20 * 5120 * 4
    assert i2v["weights"]["diffusion_model"] - t2v["weights"]["diffusion_model"] == 2 * extra_dm
    # the CLIP-H, fp16, counted with the encoders and under every phase when everything stays resident
    assert i2v["weights"]["text_encoders"] - t2v["weights"]["text_encoders"] == 2 * CLIP_H
    assert i2v["breakdown"]["sample"]["weights"] - t2v["breakdown"]["sample"]["weights"] == 2 * extra_dm + 2 * CLIP_H
    assert any("CLIP-H image encoder" in a for a in i2v["assumptions"])
    assert "image encoder" in report.format_text(i2v)  # the component table names its role
    # a clip_vision file given: that one, not a second assumed copy
    given = _est(True, extra=families.split_components(IE.clip_vision_h("F32"), "clip_vision_h_fp32.safetensors"))
    assert given["weights"]["text_encoders"] - t2v["weights"]["text_encoders"] == 4 * CLIP_H
    assert not any("no image encoder file given" in a for a in given["assumptions"])


def test_i2v_switch_and_errors():
    assert _est(True, i2v=False)["weights"]["text_encoders"] == _est(False)["weights"]["text_encoders"]
    with pytest.raises(UserError, match="text-to-video layout"):
        _est(False, i2v=True)
    with pytest.raises(UserError, match="diffusion model was not given"):     # only a text encoder and a VAE
        E.estimate(families.split_components(_table("te_umt5_xxl_fp16"), "umt5_xxl_fp16")
                   + families.split_components(_table("vae_wan_2.1_vae"), "vae_wan_2.1_vae"), 832, 480, 81, policy={"i2v": True})
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    assert report.policy_from_args(p.parse_args(["x.safetensors", "--i2v"]))["i2v"] is True
    assert report.policy_from_args(p.parse_args(["x.safetensors", "--no-i2v"]))["i2v"] is False
    assert report.policy_from_args(p.parse_args(["x.safetensors"]))["i2v"] is None


def test_wan22_i2v_layout_loads_no_image_encoder():
    # Wan 2.2 I2V A14B: the 36-channel patch embedding and no img_emb; ComfyUI's model_detection builds it as
    # model_type t2v (img_emb.proj.0.bias decides) and its I2V workflows load no clip_vision
    t = _wan14b(False)
    t["patch_embedding.weight"] = ("BF16", (5120, 36, 1, 2, 2))
    e = E.estimate(families.split_components(t, "wan2.2_i2v_high_noise_14B.safetensors"), 832, 480, 81, cfg=False)
    assert not any(c.get("kind") == IE.KIND for c in e["_ctx"]["components"])
    assert not any("CLIP-H" in a for a in e["assumptions"])
    # WanImageToVideo still encodes its start image padded to every frame, through the Wan 2.1 VAE
    with_vae = E.estimate(families.split_components(t, "wan2.2_i2v_high_noise_14B.safetensors")
                          + families.split_components(_table("vae_wan_2.1_vae"), "vae_wan_2.1_vae"), 832, 480, 81, cfg=False)
    assert with_vae["breakdown"]["vae_encode"]["activations"] == int((3328.125 + 3.125 * 81) * 832 * 480 * 2)
    assert not any("257 image tokens" in a for a in with_vae["assumptions"])
    with pytest.raises(UserError, match="Wan 2.2's I2V"):
        E.estimate(families.split_components(t, "wan2.2_i2v_high_noise_14B.safetensors"), 832, 480, 81, cfg=False,
                   policy={"i2v": True})


def test_i2v_encodes_the_start_video_before_sampling():
    t2v, i2v = _est(False), _est(True)
    assert "vae_encode" not in t2v["breakdown"]
    assert list(i2v["breakdown"])[:3] == ["text_encode", "vae_encode", "sample"]
    bd = i2v["breakdown"]["vae_encode"]
    # WanImageToVideo: the start image padded to 81 frames through the Wan 2.1 encoder (3+ chunks), bf16
    assert bd["activations"] == int((3328.125 + 3.125 * 81) * 832 * 480 * 2)
    assert bd["weights"] == i2v["breakdown"]["vae_decode"]["weights"]  # the same resident set as the decode
    assert i2v["phases"]["vae_encode"] < i2v["phases"]["sample"]
    assert "VAE encode (I2V)" in report.format_text(i2v)
    # a phase the verdict weighs: 5 frames at 720p with the DiT streamed and a tiled decode, the encode is the peak
    # (on 24 GiB; on the smallest card, 6 GB, ComfyUI's tiled retry of the encode would run instead: est-fixups3)
    short = E.estimate(_comps(True), 1280, 720, 5, cfg=False, policy={"_no_knobs": True, "offload": "sequential",
                                                                     "vae_decode": "tiled", "budget": 24 * 2 ** 30})
    assert short["peak_phase"] == "vae_encode" and short["tiled_retry"] == {}
    assert short["breakdown"]["vae_encode"]["activations"] == int((2925.625 + 3.125 * 5) * 1280 * 720 * 2)
