"""The formula against the traced peaks of ComfyUI's real forward it was calibrated on
(test_estimate_traced_pins.json; tests/host/test_trace_comfy.py keeps the tracer honest on the same bytes), and
proof that these checks can fail: each core coefficient, deliberately doubled, breaks at least one of them."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import families, formula as E, layouts, phases, sample_acts as SA, spec, vae as V

PINS = json.loads((Path(__file__).with_name("test_estimate_traced_pins.json")).read_text())["cases"]
LAYOUT = {"sd1": "sd15_v1-5-pruned-emaonly-fp16", "sdxl": "sdxl_sd_xl_base_1.0", "sd3": "sd3_sd3.5_medium",
          "flux1": "flux_flux1-dev", "wan21": "wan_wan2.1_t2v_1.3B_fp16", "wan22": "wan_wan2.2_ti2v_5B_fp16",
          "qwen-image": "qwen_image_qwen_image_bf16", "z-image": "z_image_z_image_turbo_bf16"}
VAE = {"sd1": "vae_sd15_vae-ft-mse-840000-ema-pruned", "wan21": "vae_wan_2.1_vae", "wan22": "vae_wan2.2_vae",
       "hunyuan-video": "vae_hunyuan_video_vae_bf16"}
TEXT = {"flux1": ["te_clip_l", "te_t5xxl_fp16"], "wan21": ["te_umt5_xxl_fp16"]}
CFG = {"sd1": True, "sdxl": True, "sd3": True, "flux1": False, "wan21": True, "wan22": True, "qwen-image": None, "z-image": None}
# the text tokens the tracer conditions with where they differ from the family's default (memory/trace/comfy_checkout.py)
TRACE_TOKENS = {"qwen-image": 10, "z-image": 13}
TOLERANCE = 0.05  # per case; a 2x error in any coefficient is far outside it


_table = layouts.table


def ours(pin) -> int:
    f, w, h, n, b = pin["family"], pin["width"], pin["height"], pin["frames"], pin["batch"]
    if pin["phase"] == "sample":
        comps = [c for c in families.split_components(_table(LAYOUT[f]), f) if c["role"] == "diffusion_model"]
        e = E.estimate(comps, w, h, n, b, cfg=CFG[f], policy={"_no_knobs": True, "text_tokens": TRACE_TOKENS.get(f)})
        return e["breakdown"]["sample_naive_attention" if pin["attention"] == "math" else "sample"]["activations"]
    if pin["phase"] == "text":
        comps = [c for n in TEXT[f] for c in families.split_components(_table(n), n)]
        return E.estimate(comps, w, h, n, b, policy={"_no_knobs": True, "family": f})["breakdown"]["text_encode"]["activations"]
    comps = families.split_components(_table(VAE[f]), f)
    if pin["phase"] == "encode":
        return V.vae_encode_bytes(spec.vae_kind_for(comps[0]["kind"], f), (w, h, n)) * b
    e = E.estimate(comps, w, h, n, b, policy={"_no_knobs": True, "family": f, "vae_decode": "untiled"})
    # the tracer-equivalent figure: a meta trace has no CUDA convolution workspace (estimate/cuda_conv.py)
    return e["breakdown"]["vae_decode"]["activations"] - e["breakdown"]["vae_decode"]["conv_workspace"]


def errors():
    return {(p["family"], p["phase"], p["attention"], p["width"], p["frames"]): ours(p) / p["activations"] - 1 for p in PINS}


def check():
    bad = {k: round(e, 3) for k, e in errors().items() if abs(e) > TOLERANCE}
    assert not bad, f"formula off the traced peaks by more than {TOLERANCE:.0%}: {bad}"


def test_formula_matches_the_traced_peaks():
    check()


def test_stable_api_matches_the_estimate():
    """sample_activation_bytes / vae_decode_bytes (the functions other modules call) give the estimate's figures."""
    for p in PINS:
        if p["phase"] == "sample" and p["attention"] == "flash" and p["family"] in ("flux1", "wan21", "sdxl"):
            f = p["family"]
            comps = [c for c in families.split_components(_table(LAYOUT[f]), f) if c["role"] == "diffusion_model"]
            e = E.estimate(comps, p["width"], p["height"], p["frames"], 1, cfg=CFG[f], policy={"_no_knobs": True})
            api = phases.sample_activation_bytes(f, e["latent"]["shape"], "bf16", 2 if CFG[f] else 1, arch=comps[0]["arch"])
            assert api == e["breakdown"]["sample"]["activations"]
    assert V.vae_decode_bytes("kl", [1, 4, 64, 64], "bf16") == ours(PINS[[p["phase"] for p in PINS].index("decode")])


MUTATIONS = [
    ("FLUX block x2", lambda m: m.setattr(phases, "FLUX_UNITS", phases.FLUX_UNITS * 2)),
    ("Wan cross block x2", lambda m: (m.setattr(phases, "CROSS_A", phases.CROSS_A * 2), m.setattr(phases, "CROSS_B", phases.CROSS_B * 2))),
    ("U-Net units x2", lambda m: m.setattr(phases, "unet_units", (lambda f: (lambda a, fam: 2 * f(a, fam)))(phases.unet_units))),
    ("all block units x2", lambda m: m.setattr(phases, "block_units", (lambda f: (lambda a: 2 * f(a)))(phases.block_units))),
    ("KL decode x2", lambda m: m.setattr(V, "KL_DECODE", V.KL_DECODE * 2)),
    ("KL encode x2", lambda m: m.setattr(V, "KL_ENCODE", V.KL_ENCODE * 2)),
    ("Wan decode x2", lambda m: m.setattr(V, "WAN_DECODE", V.WAN_DECODE * 2)),
    ("Wan one-frame decode x2", lambda m: m.setattr(V, "WAN_DECODE_ONE", V.WAN_DECODE_ONE * 2)),
    ("Wan 2.2 decode x2", lambda m: m.setattr(V, "WAN22_DECODE", V.WAN22_DECODE * 2)),
    ("HunyuanVideo decode x2", lambda m: m.setattr(V, "HV_DECODE", V.HV_DECODE * 2)),
    ("Qwen-Image dual block MLP x2", lambda m: m.setattr(phases, "DUAL_MLP", phases.DUAL_MLP * 2)),
    ("NextDiT (Z-Image) MLP x2", lambda m: m.setattr(phases, "NEXTDIT_MLP", phases.NEXTDIT_MLP * 2)),
    ("Qwen-Image cond and uncond batched", lambda m: m.setitem(spec.FAMILY["qwen-image"], "cfg_separate", False)),
    ("text encoder per-token x2", lambda m: m.setattr(phases, "TE_TOKEN_UNITS", phases.TE_TOKEN_UNITS * 2)),
    ("text encoder scores x2", lambda m: m.setattr(phases, "TE_SCORE_UNITS", phases.TE_SCORE_UNITS * 2)),
    ("text encoder activations x2", lambda m: m.setattr(E, "te_activation", (lambda f: (lambda *a, **k: 2 * f(*a, **k)))(E.te_activation))),
    ("sample phase activations x2", lambda m: m.setattr(SA, "sample_parts", (lambda f: (lambda *a, **k: (lambda r: (2 * r[0], r[1], r[2]))(f(*a, **k))))(SA.sample_parts))),
]


@pytest.mark.parametrize("name,mutate", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_deliberate_error_breaks_the_check(monkeypatch, name, mutate):
    mutate(monkeypatch)
    with pytest.raises(AssertionError):
        check()
