"""--text-encoders stream: a text encoder run on the device a block at a time from host memory, as LightX2V's T5 does
with cpu_offload (lightx2v/models/input_encoders/hf/wan/t5/model.py at 744661c0: one block buffer on the device,
T5OffloadBlocksWeights range(1); forward_with_offload moves the token embedding and the final norm onto the device and
never back). UMT5-XXL's kept bytes are written out from its shapes (d_model 4096, 64 heads x 64, d_ff 10240, vocab
256384, a 32 x 64 relative bias per block). Counting no block or two, dropping the kept bytes from sampling or the
decode, or keeping an image encoder under sampling breaks a test here."""
import argparse

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, image_encoder as IE, layouts, report, weights as W

BLOCK = 4 * 4096 * 4096 + 32 * 64 + 4096 + 3 * 4096 * 10240 + 4096  # attention, bias, norms, gated FFN
KEPT = 2 * (256384 * 4096 + 4096 + BLOCK)  # fp16: token embedding, final norm, one block buffer
UMT5 = 2 * (256384 * 4096 + 4096 + 24 * BLOCK)


_table = layouts.table


def _wan13b():
    d, ffn = 1536, 8960
    t = {"patch_embedding.weight": (d, 16, 1, 2, 2), "text_embedding.0.weight": (d, 4096), "text_embedding.2.weight": (d, d),
         "time_embedding.0.weight": (d, 256), "time_embedding.2.weight": (d, d), "time_projection.1.weight": (6 * d, d),
         "head.head.weight": (64, d), "head.modulation": (1, 2, d)}
    for i in range(30):
        t.update({f"blocks.{i}.{a}.{n}.weight": (d, d) for a in ("self_attn", "cross_attn") for n in "qkvo"})
        t.update({f"blocks.{i}.ffn.0.weight": (ffn, d), f"blocks.{i}.ffn.2.weight": (d, ffn), f"blocks.{i}.modulation": (1, 6, d)})
    return {k: ("BF16", s) for k, s in t.items()}


def _comps(extra=()):
    return (families.split_components(_wan13b(), "wan21")
            + [c for n in ("te_umt5_xxl_fp16", "vae_wan_2.1_vae") for c in families.split_components(_table(n), n)]
            + list(extra))


def _est(mode, extra=(), **pol):
    return E.estimate(_comps(extra), 832, 480, 81, cfg=False,
                      policy=dict({"_no_knobs": True, "text_encoders": mode, "vae_decode": "untiled"}, **pol))


def test_umt5_streamed_keeps_embedding_norm_and_one_block():
    t = _table("te_umt5_xxl_fp16")
    assert W.resident_bytes(t) == UMT5
    assert W.streamed_bytes(t) == KEPT  # 2.32 GiB of 10.58


def test_streamed_bytes_without_numbered_blocks_is_the_whole_table():
    t = {"shared.weight": ("F16", (1000, 64)), "final_layer_norm.weight": ("F16", (64,))}
    assert W.streamed_bytes(t) == W.resident_bytes(t)


def test_stream_keeps_the_embedding_under_sampling_and_decode():
    s, c = _est("stream")["breakdown"], _est("cpu")["breakdown"]
    assert s["text_encode"]["weights"] == KEPT
    assert s["sample"]["weights"] - c["sample"]["weights"] == KEPT
    assert s["vae_decode"]["weights"] - c["vae_decode"]["weights"] == KEPT
    u = _est("unload")["breakdown"]
    assert u["text_encode"]["weights"] == UMT5 and u["sample"]["weights"] == c["sample"]["weights"]


def test_stream_with_every_model_resident_moves_an_image_encoder_off():
    clip = families.split_components(IE.clip_vision_h(), "clip_vision_h.safetensors")  # 632,076,800 fp16 parameters
    assert clip[0]["role"] == "text_encoder"
    s = _est("stream", clip, models="resident")["breakdown"]
    dm = W.resident_bytes(_wan13b())
    vae = s["vae_decode"]["weights"] - dm - KEPT
    assert s["sample"]["weights"] == dm + KEPT + vae  # the CLIP's 1.18 GiB is not under sampling
    assert s["text_encode"]["weights"] == KEPT + 2 * 632_076_800 + dm + vae


def test_stream_is_a_choice_and_a_bad_mode_a_clear_error():
    with pytest.raises(UserError, match="text encoders must be one of unload, resident, cpu, stream"):
        _est("gpu")
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    assert report.policy_from_args(p.parse_args(["x.safetensors", "--text-encoders", "stream"]))["text_encoders"] == "stream"
    assert "streamed block by block" in " ".join(_est("stream")["assumptions"])
