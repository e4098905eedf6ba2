"""diffusers' VAE slicing (pipe.enable_vae_slicing(); AutoencoderKL.decode with use_slicing: one latent of z.split(1)
per _decode call, then torch.cat): --vae-slicing figures one sample's decode plus the samples decoded before it, where
--runner diffusers otherwise decodes the whole batch in one call. The expected figures are written out from the KL
decode's per-pixel elements (vae.DIFFUSERS_KL_DECODE 975, plus its fp32 output) and 3 channels per held image; the
whole batch, no held outputs, or B held outputs instead of B-1 break a test."""
import argparse

import pytest

from gpu_garden.memory.estimate import families, formula as E, layouts, report, vae
from gpu_garden.memory.errors import UserError

MiB = 1 << 20
PER_FP32_1024 = (975 * 4 + 3 * 4) * MiB  # one 1024x1024 image: 975 elements/pixel in fp32 + its fp32 output
IMAGE_FP32_1024 = 3 * 4 * MiB  # one decoded 3 x 1024 x 1024 image in fp32


def test_sliced_kl_decode_is_one_sample_plus_the_ones_before():
    v = vae.phase("kl", [4, 4, 128, 128], "fp32", mode="untiled", runner="diffusers", slicing=True)
    assert v["bytes"] == PER_FP32_1024 + 3 * IMAGE_FP32_1024
    assert v["batch"] == 1 and v["batch_of"] == 4
    whole = vae.phase("kl", [4, 4, 128, 128], "fp32", mode="untiled", runner="diffusers")
    assert whole["bytes"] == 4 * PER_FP32_1024
    one = vae.phase("kl", [1, 4, 128, 128], "fp32", mode="untiled", runner="diffusers", slicing=True)
    assert one["bytes"] == PER_FP32_1024  # batch 1: nothing held


def test_sliced_video_holds_every_frame_of_the_samples_before():
    # Wan 2.1 VAE, 2 samples of 832x480x33 (9 latent frames) in bf16: the first sample's 33 frames are held
    held = vae.sliced_outputs_bytes("wan21", [2, 16, 9, 60, 104], "bf16")
    assert held == 3 * 33 * 832 * 480 * 2


def test_estimate_takes_it_from_the_policy_and_cli():
    comps = [c for n in ("sdxl_sd_xl_base_1.0",) for c in families.split_components(layouts.table(n), n)]
    pol = {"_no_knobs": True, "vae_decode": "untiled", "runner": "diffusers"}
    whole = E.estimate(comps, 1024, 1024, 1, 4, policy=pol)["breakdown"]["vae_decode"]
    sliced = E.estimate(comps, 1024, 1024, 1, 4, policy=dict(pol, vae_slicing=True))["breakdown"]["vae_decode"]
    assert whole["activations"] - sliced["activations"] == 3 * PER_FP32_1024 - 3 * IMAGE_FP32_1024  # SDXL: fp32 upcast
    with pytest.raises(UserError, match="diffusers"):
        E.estimate(comps, 1024, 1024, 1, 4, policy=dict(pol, runner="comfyui", vae_slicing=True))
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    assert report.policy_from_args(p.parse_args(["x", "--vae-slicing", "--runner", "diffusers"]))["vae_slicing"] is True
    assert report.policy_from_args(p.parse_args(["x"]))["vae_slicing"] is False


def test_diffusers_knobs_name_the_pipeline_switches():
    comps = [c for n in ("sdxl_sd_xl_base_1.0",) for c in families.split_components(layouts.table(n), n)]
    pol = {"runner": "diffusers", "offload": "none", "vae_decode": "untiled"}
    knobs = {k["id"]: k for k in E.estimate(comps, 1024, 1024, 1, 4, policy=pol)["knobs"]}
    whole = 4 * PER_FP32_1024
    sliced = PER_FP32_1024 + 3 * IMAGE_FP32_1024
    # the decode is the peak either way: the saving is the activations, their 5 % allocator margin and the reserved
    # slack of the three further images one call of four holds (vae.DIFFUSERS_KL_SLACK_IMAGE, 559 per pixel, fp32)
    assert knobs["vae_slicing"]["saving"] == whole - sliced + int(0.05 * whole) - int(0.05 * sliced) + 3 * 559 * 1024 * 1024 * 4
    assert "tiled_vae" not in knobs  # diffusers does not tile an SDXL latent of one 1024 px tile
    knobs = {k["id"]: k for k in E.estimate(comps, 2048, 2048, 1, 4, policy=pol)["knobs"]}
    assert knobs["tiled_vae"]["label"] == "pipe.enable_vae_tiling()"
    assert "vae_slicing" not in {k["id"] for k in E.estimate(comps, 1024, 1024, 1, 4, policy=dict(pol, vae_slicing=True))["knobs"]}


def test_diffusers_knobs_offer_its_offload_switches_not_comfyuis_partial_load():
    """Under --runner diffusers a pipeline kept whole on the GPU (pipe.to('cuda')) is offered enable_model_cpu_offload
    and enable_sequential_cpu_offload, figured as --offload model / sequential; ComfyUI's partial load (--lowvram) is
    not a diffusers switch, so it is not offered."""
    comps = [c for n in ("flux_flux1-dev", "te_clip_l", "te_t5xxl_fp16", "vae_flux_ae")
             for c in families.split_components(layouts.table(n), n)]
    pol = {"runner": "diffusers", "budget": 16 << 30}
    knobs = {k["id"]: k for k in E.estimate(comps, 1024, 1024, 1, 2, cfg=False, policy=dict(pol, offload="none"))["knobs"]}
    model = E.estimate(comps, 1024, 1024, 1, 2, cfg=False, policy=dict(pol, offload="model", _no_knobs=True))["peak"]
    assert knobs["model_offload"]["label"].startswith("pipe.enable_model_cpu_offload()")
    assert knobs["model_offload"]["peak_after"] == model
    assert knobs["sequential_offload"]["peak_after"] < model
    knobs = {k["id"] for k in E.estimate(comps, 1024, 1024, 1, 2, cfg=False, policy=pol)["knobs"]}
    assert "partial_offload" not in knobs and "model_offload" not in knobs and "sequential_offload" in knobs
