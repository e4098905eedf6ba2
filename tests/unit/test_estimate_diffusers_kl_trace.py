"""diffusers' AutoencoderKL decode (runner "diffusers") against its own code traced on meta tensors
(tests/unit/data/diffusers_kl_decode_trace.json: diffusers 0.32.2, FLUX.1 and SDXL VAE configs; how and versions in the
file). The trace is a floor of a GPU run (no cuDNN workspace on meta); vae.DIFFUSERS_KL_DECODE is fitted on GPU rows that
hold the workspace, so it must lie between the traced figure and the traced figure plus cuda_conv's KL workspace."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import cuda_conv as C, vae as V

TRACE = json.loads((Path(__file__).resolve().parent / "data" / "diffusers_kl_decode_trace.json").read_text())
ROWS = TRACE["rows"]
BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
LATENT = {"flux1": 16, "sdxl": 4}
QUANT_CONV = {"flux1": False, "sdxl": True}  # SDXL's post_quant_conv output is held beside the latent


def _id(r):
    return f"{r['family']}-{r['px']}-b{r['batch']}-{r['dtype']}"


@pytest.mark.parametrize("r", ROWS, ids=_id)
def test_trace_peak_is_three_256_channel_images(r):
    # by hand: 3 x 256 channels at full resolution per image (up_blocks[3].resnets[0]'s input, norm1, SiLU) + the latent
    eb, hw = BYTES[r["dtype"]], r["px"] * r["px"]
    latent = LATENT[r["family"]] * hw // 64 * r["batch"] * eb
    assert r["inputs"] == latent
    assert r["activations"] == V.DIFFUSERS_KL_TRACED * hw * r["batch"] * eb + latent * (2 if QUANT_CONV[r["family"]] else 1)
    assert V.DIFFUSERS_KL_TRACED == 768


def test_fitted_allocated_lies_between_trace_and_trace_plus_workspace():
    floor = V.DIFFUSERS_KL_TRACED
    ceiling = floor + C.COPIES["kl"] * C.DECODE_CHANNELS["kl"]  # 768 + 1.75 x 256 = 1216
    assert ceiling == 1216
    assert floor < V.DIFFUSERS_KL_DECODE < ceiling


def test_decode_scales_with_the_batch_as_traced():
    # the trace grows by exactly B (whole batch in one call); so does our figure for a pipeline's one call
    one = next(r for r in ROWS if (r["family"], r["px"], r["batch"], r["dtype"]) == ("flux1", 1024, 1, "bf16"))
    for r in ROWS:
        if (r["family"], r["px"], r["dtype"]) == ("flux1", 1024, "bf16") and r["batch"] > 1:
            b = r["batch"]
            assert r["activations"] - r["inputs"] == b * (one["activations"] - one["inputs"])
            ph = V.phase("kl", [b, 16, 128, 128], "bf16", None, "untiled", runner="diffusers")
            assert ph["bytes"] == b * V.vae_decode_bytes("kl", [1, 16, 128, 128], "bf16", "diffusers")


def test_fitted_reserved_is_above_the_traced_reserved_at_batch_one():
    # the allocator model (no workspace blocks) reserves less than the native reserved the FLUX rows give (975 + slack)
    r = next(r for r in ROWS if (r["family"], r["px"], r["batch"], r["dtype"]) == ("flux1", 1024, 1, "bf16"))
    traced = r["reserved_peak"] - r["weights"]
    ours = V.vae_decode_bytes("kl", [1, 16, 128, 128], "bf16", "diffusers") + \
        V.allocator_slack_bytes("kl", [1, 16, 128, 128], "bf16", "diffusers")
    assert traced / (1024 * 1024 * 2) == pytest.approx(1381, abs=1)  # 768 + 609, the latent and block rounding
    assert traced < ours


def _slack(r):
    return r["reserved_peak"] - r["allocated_peak"]


def test_each_further_image_adds_the_traced_slack():
    # the trace: reserved beyond allocated grows by ~608 elements per pixel of each further image (batch 2, 4, 16 vs 1)
    flux = {r["batch"]: r for r in ROWS if (r["family"], r["px"], r["dtype"]) == ("flux1", 1024, "bf16")}
    px = 1024 * 1024
    for b in (2, 4, 16):
        step = (_slack(flux[b]) - _slack(flux[1])) / (b - 1) / px / 2
        assert step == pytest.approx(608, abs=1)
        # ours: the per-image increment beyond the 5 % margin of that image's decode (975 + the fp32 output's 6) = 608
        assert V.DIFFUSERS_KL_SLACK_IMAGE + 0.05 * (V.DIFFUSERS_KL_DECODE + 6) == pytest.approx(step, abs=1.5)
    # by hand: 1385 for the first image, 559 for each of the other three
    assert V.allocator_slack_bytes("kl", [4, 16, 128, 128], "bf16", "diffusers", 4) == (1385 + 3 * 559) * px * 2
    assert V.allocator_slack_bytes("kl", [4, 16, 128, 128], "bf16", "diffusers") == 1385 * px * 2


def test_pipeline_call_counts_every_image_and_slicing_one():
    px = 1024 * 1024
    whole = V.phase("kl", [4, 16, 128, 128], "bf16", None, "untiled", runner="diffusers")
    assert whole["allocator_slack"] == (1385 + 3 * 559) * px * 2
    sliced = V.phase("kl", [4, 16, 128, 128], "bf16", None, "untiled", runner="diffusers", slicing=True)
    assert sliced["allocator_slack"] == 1385 * px * 2
    assert V.phase("kl", [4, 16, 128, 128], "bf16", None, "untiled")["allocator_slack"] == 0  # ComfyUI: none
