"""--attention math: the n x n attention scores held whole in the sample phase (diffusers 0.11.1's
CrossAttention._attention: torch.empty(b*h, n, n) for baddbmm, then softmax's own n x n; ComfyUI's attention_basic).
SD 1.5 at 512 with CFG: 2 x 8 heads x 4096^2 scores x 2 copies x 2 bytes = 1 GiB, written out here. Not switching the
sample phase, or a wrong n x n term, breaks a test here."""
import argparse

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, layouts, phases, report

NAIVE_SD15_512_CFG = 2 * 8 * 4096 * 4096 * 2 * 2


def _sd15():
    return families.split_components(layouts.table("sd15_v1-5-pruned-emaonly-fp16"), "sd15")


def _est(att):
    return E.estimate(_sd15(), 512, 512, cfg=True, policy={"_no_knobs": True, "attention": att, "models": "resident",
                                                          "text_encoders": "resident"})


def test_math_attention_is_the_sample_phase():
    flash, math_ = _est("flash"), _est("math")
    lat = phases.latent_geometry("sd1", 512, 512, 1, 1)
    act, naive, _ = phases.sample_parts("sd1", phases.default_arch("sd1"), lat, 2, 2, 1)
    assert naive == NAIVE_SD15_512_CFG == 2 ** 30
    gain = math_["breakdown"]["sample"]["activations"] - flash["breakdown"]["sample"]["activations"]
    assert gain == max(act, int(0.6 * act) + 2 ** 30) - act > 0.8 * 2 ** 30
    assert math_["breakdown"]["sample_naive_attention"] == math_["breakdown"]["sample"]
    assert flash["breakdown"]["sample_naive_attention"]["activations"] == math_["breakdown"]["sample"]["activations"]
    assert any("--attention math" in a for a in math_["assumptions"])


def test_unknown_attention_is_a_clear_error():
    with pytest.raises(UserError, match="attention must be one of flash, math"):
        _est("sdpa")


def test_cli_flag():
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    assert report.policy_from_args(p.parse_args(["x.safetensors", "--attention", "math"]))["attention"] == "math"
    assert report.policy_from_args(p.parse_args(["x.safetensors"]))["attention"] == "flash"
