"""Runner profiles of the estimate: whose model code runs changes the peak. Expected bytes are written out from the
runners' code (element sizes per token x hidden), not taken from the module; halving a term breaks a test here."""
import argparse

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, layouts, report, weights as W


_table = layouts.table


def _dm(name, fam):
    return [c for c in families.split_components(_table(name), fam) if c["role"] == "diffusion_model"]


def _sample_act(comps, w, h, f, runner):
    e = E.estimate(comps, w, h, f, cfg=False, policy={"_no_knobs": True, "runner": runner})
    return e["breakdown"]["sample"]["activations"]


def test_wan_reference_dit_peak_from_its_code():
    # Wan's reference block (wan/modules/model.py; DiffSynth-Studio 0219e8d2 diffsynth/models/wan_video_dit.py):
    # fp32 residual x, the fp32 modulated input, q/k/v bf16, rope(q) returned as fp32, and inside rope(k) a float64
    # copy plus the complex128 product
    per = 4 + 4 + 3 * 2 + 4 + (8 + 8)
    comps = _dm("wan_wan2.1_t2v_1.3B_fp16", "wan21")
    tokens = 21 * (480 // 16) * (832 // 16)  # 81 frames -> 21 latent frames, 2x2 patches of the 8x latent
    assert tokens == 32760
    act = _sample_act(comps, 832, 480, 81, "wan")
    assert act - W.largest_cast(comps[0]["table"]) == per * tokens * 1536
    # ComfyUI's port holds less: its figure is below the reference runner's
    assert _sample_act(comps, 832, 480, 81, "comfyui") < act


def test_wan22_reference_dit_modulates_every_token_in_fp32():
    # Wan 2.2's WanModel.forward expands the timestep to every token: e0 [B, L, 6, C] fp32 held through the blocks,
    # e [B, L, C] fp32 held for the head, and each block's (modulation + e0) [B, L, 6, C] fp32, beside Wan 2.1's peak
    per = 4 + 4 + 3 * 2 + 4 + (8 + 8) + (6 * 4 + 4 + 6 * 4)
    comps = _dm("wan_wan2.2_ti2v_5B_fp16", "wan22")
    tokens = 41 * (704 // 32) * (1280 // 32)  # 161 frames -> 41 latent frames, 2x2 patches of the 16x latent
    assert tokens == 36080
    act = _sample_act(comps, 1280, 704, 161, "wan")
    assert act - W.largest_cast(comps[0]["table"]) == per * tokens * 3072


def test_wan_runner_leaves_other_families_alone():
    comps = _dm("flux_flux1-dev", "flux1")
    assert _sample_act(comps, 1024, 1024, 1, "wan") == _sample_act(comps, 1024, 1024, 1, "comfyui")


def test_wan_runner_from_the_cli_and_bad_runner():
    ap = argparse.ArgumentParser()
    report.add_cli_arguments(ap)
    assert report.policy_from_args(ap.parse_args(["--runner", "wan"]))["runner"] == "wan"
    with pytest.raises(SystemExit):
        ap.parse_args(["--runner", "sglang"])
    with pytest.raises(UserError):
        E.estimate(_dm("wan_wan2.1_t2v_1.3B_fp16", "wan21"), 832, 480, 81, policy={"_no_knobs": True, "runner": "sglang"})


def test_second_diffusion_model_stays_only_when_models_are_resident():
    # Wan 2.2 A14B: two experts; a pipeline moved to the device whole (diffusers pipe.to("cuda"), vLLM-Omni) holds
    # both, ComfyUI's model swap holds the one it samples with
    one = _dm("wan_wan2.1_t2v_1.3B_fp16", "wan21")[0]
    two = [one, dict(one, source="second expert")]
    w1 = sum(2 * n for n in (int(__import__("math").prod(s)) for _, s in one["table"].values()))  # fp16 file: 2 bytes
    res = E.estimate(two, 832, 480, 81, cfg=False, policy={"_no_knobs": True, "models": "resident"})
    swap = E.estimate(two, 832, 480, 81, cfg=False, policy={"_no_knobs": True, "models": "swap"})
    single = E.estimate([one], 832, 480, 81, cfg=False, policy={"_no_knobs": True, "models": "resident"})
    assert res["breakdown"]["sample"]["weights"] - single["breakdown"]["sample"]["weights"] == w1
    assert swap["breakdown"]["sample"]["weights"] == w1
    assert res["breakdown"]["vae_decode"]["weights"] >= 2 * w1
