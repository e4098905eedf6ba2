"""--offload none|model|sequential, a model that cannot leave the device, and the two diffusers mechanisms that
measured batch 3 showed (fp32 RoPE in LTX-Video's attention, HunyuanVideo's untiled decoder). Expected bytes are
written out by hand from layer shapes; a doubled coefficient or a dropped streamed layer breaks a test here."""
import argparse
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, layouts, phases, report, vae as V, weights as W


_table = layouts.table


def _flux_pipeline():
    return [c for n, f in (("flux_flux1-dev", "flux1"), ("te_t5xxl_fp16", "t5"), ("vae_flux_ae", "vae"))
            for c in families.split_components(_table(n), f)]


def _est(offload, **pol):
    return E.estimate(_flux_pipeline(), 1024, 1024, cfg=False, policy=dict({"_no_knobs": True, "offload": offload}, **pol))


def test_offload_none_keeps_every_model_and_model_swaps():
    none, model = _est("none"), _est("model")
    w = {c["role"]: c["resident"] for c in none["_ctx"]["components"]}
    # none: the sample phase carries the T5 and the VAE as well; model: only the diffusion model
    assert none["breakdown"]["sample"]["weights"] - model["breakdown"]["sample"]["weights"] == w["text_encoder"] + w["vae"]
    assert none["offload"] == "none" and model["offload"] == "model"
    assert none["policy"]["models"] == "resident" and model["policy"]["models"] == "swap"


def test_sequential_streams_one_layer_per_phase():
    model, seq = _est("model"), _est("sequential")
    assert seq["offload"] == "sequential"
    # diffusion model: no resident weights; FLUX.1's largest layer (linear1 of a single block: 3072 -> 21504, bf16)
    assert seq["breakdown"]["sample"]["weights"] == 0
    assert seq["breakdown"]["sample"]["activations"] - model["breakdown"]["sample"]["activations"] == 21504 * 3072 * 2
    # text encode: T5-XXL's largest tensor is its token embedding, 32128 x 4096 fp16, streamed like a layer
    assert seq["breakdown"]["text_encode"]["weights"] == W.OFFLOAD_LAYERS * 32128 * 4096 * 2
    assert seq["breakdown"]["text_encode"]["activations"] == model["breakdown"]["text_encode"]["activations"]
    assert seq["peak"] < model["peak"] / 4


def test_offload_flag_in_cli_and_json():
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    assert report.policy_from_args(p.parse_args(["x.safetensors", "--offload", "sequential"]))["offload"] == "sequential"
    assert report.policy_from_args(p.parse_args(["x.safetensors"]))["offload"] is None
    with pytest.raises(SystemExit):
        p.parse_args(["x.safetensors", "--offload", "leaf"])
    out = json.loads(json.dumps(E.public(_est("model")), default=str))
    assert out["offload"] == "model" and out["policy"]["offload"] == "model"
    # without --offload the old flags decide, and the JSON names what they amount to
    assert _est(None, models="swap")["offload"] == "model"


def test_unknown_offload_is_a_clear_error():
    with pytest.raises(UserError, match="offload"):
        _est("leaf")


def test_keep_on_device_puts_the_diffusion_model_under_every_phase():
    base, stay = _est("model"), _est("model", keep_on_device=["diffusion_model"])
    dm = [c["resident"] for c in base["_ctx"]["components"] if c["role"] == "diffusion_model"][0]
    for ph in ("text_encode", "vae_decode"):
        assert stay["breakdown"][ph]["weights"] - base["breakdown"][ph]["weights"] == dm
    assert stay["breakdown"]["sample"]["weights"] == base["breakdown"]["sample"]["weights"]


def _ltx():
    # LTX-Video 0.9.7 13B keys (hidden 4096, cross-attention 4096) as the measured rows give them
    t = {"adaln_single.emb.timestep_embedder.linear_1.bias": ("BF16", (4096,)),
         "transformer_blocks.0.attn2.to_k.weight": ("BF16", (4096, 4096)), "params.blob": ("BF16", (1000,))}
    return [c for c in families.split_components(t, "ltxv") if c["role"] == "diffusion_model"]


def test_diffusers_ltx_rope_runs_in_fp32():
    comfy = E.estimate(_ltx(), 704, 512, 161, cfg=False, policy={"_no_knobs": True})
    diff = E.estimate(_ltx(), 704, 512, 161, cfg=False, policy={"_no_knobs": True, "runner": "diffusers"})
    tokens = 21 * 16 * 22  # 161 frames -> 21 latent frames; 512x704 / 32 -> 16 x 22
    assert diff["latent"]["image_tokens"] == tokens == 7392
    # 32 bytes per token x hidden: q, k, v, input, norm (5 x 2), fp32 cos/sin (2 x 4), fp32 temporaries (3 x 4), x_rot (2)
    assert phases.DIFFUSERS_FP32_ROPE["ltxv"] == 32
    cast = W.largest_cast(_ltx()[0]["table"])
    assert diff["breakdown"]["sample"]["activations"] == 32 * tokens * 4096 + cast
    assert comfy["breakdown"]["sample"]["activations"] < diff["breakdown"]["sample"]["activations"]
    # other families are untouched by the runner
    assert phases.diffusers_rope_peak("flux1", {"hidden": 3072}, {"image_tokens": 4096}, 1) == 0


def test_diffusers_hunyuan_video_decode():
    lat = [1, 16, 31, 64, 96]  # 768x512, 121 frames
    # diffusers decodes in 16-frame chunks by default (17 frames each, 8 decoded chunks held at the last full one)
    assert V.vae_decode_bytes("hunyuan-video", lat, "bf16", "diffusers") == (449 * 17 + 8 * 3 * 17) * 768 * 512 * 2
    # ComfyUI's decoder in chunks of 2 latent frames, as traced (vae.HV_DECODE, HV_FRAME), not its own heuristic
    assert V.vae_decode_bytes("hunyuan-video", lat, "bf16") == int((11234 + 4.46 * 121) * 768 * 512 * 2)


def test_wan22_decode_in_fp32_as_wans_own_runner():
    # Wan's runner decodes in fp32 (Wan2_2_VAE dtype=torch.float); 1280x704x121: latent [1, 48, 31, 44, 80]
    px = 1280 * 704
    assert V.vae_decode_bytes("wan22", [1, 48, 31, 44, 80], "fp32") == (V.WAN22_DECODE * px + V.WAN_FRAME * 121 * px) * 4
    assert V.WAN22_DECODE == 4355 and V.WAN_FRAME == 3


def test_sequential_streams_the_vae_one_layer_at_a_time():
    model, seq = _est("model"), _est("sequential")
    # FLUX's VAE (ae.safetensors, fp32): its largest tensor is a 512 -> 512 3x3 conv of the decoder, 512*512*9*4 bytes
    assert seq["breakdown"]["vae_decode"]["weights"] == W.OFFLOAD_LAYERS * 512 * 512 * 3 * 3 * 4
    assert W.OFFLOAD_LAYERS == 1
    assert seq["breakdown"]["vae_decode"]["activations"] == model["breakdown"]["vae_decode"]["activations"]
