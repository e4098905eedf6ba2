"""The estimate against published measured peaks (benchmarks/data/diffusion_measured.json) and the two terms
fitted on its FIT rows: diffusers' KL decoder (runner "diffusers") and the streamed layer of an offloaded model.
Expected bytes are written out by hand from the layer shapes; a doubled coefficient breaks a test here."""
import argparse
import json
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, layouts, report, vae as V

GiB = 1024 ** 3
DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "diffusion_measured.json"


_table = layouts.table


def _dm(name, fam):
    return [c for c in families.split_components(_table(name), fam) if c["role"] == "diffusion_model"]


def test_diffusers_kl_decode_bytes():
    # one 1024x1024 sample, bf16: 975 elements per output pixel allocated (diffusers) vs 642 (ComfyUI), plus the fp32
    # output; diffusers' decode also reserves 1385 more per pixel of one image (caching-allocator slack)
    px = 1024 * 1024
    assert V.vae_decode_bytes("kl", [1, 16, 128, 128], "bf16", "diffusers") == 975 * px * 2 + 3 * px * 4
    assert V.allocator_slack_bytes("kl", [4, 16, 128, 128], "bf16", "diffusers") == 1385 * px * 2
    assert V.allocator_slack_bytes("kl", [4, 16, 128, 128], "bf16") == 0
    assert V.vae_decode_bytes("kl", [1, 16, 128, 128], "bf16") == 642 * px * 2 + 3 * px * 4
    # video VAEs are not touched by the runner switch
    assert V.vae_decode_bytes("wan21", [1, 16, 21, 60, 104], "bf16", "diffusers") == \
        V.vae_decode_bytes("wan21", [1, 16, 21, 60, 104], "bf16")


def test_flux_pipeline_under_diffusers_matches_the_measured_peak():
    # FIT row hf-blog-quant-flux1-dev-bf16-peak: FLUX.1-dev pipeline, all resident, 1024x1024, 512 tokens, VAE bf16,
    # max_memory_reserved 36.166 GiB (https://huggingface.co/blog/diffusers-quantization)
    comps = [c for n, f in (("flux_flux1-dev", "flux1"), ("te_clip_l", "clip"), ("te_t5xxl_fp16", "t5"), ("vae_flux_ae", "vae"))
             for c in families.split_components(_table(n), f)]
    pol = {"_no_knobs": True, "models": "resident", "text_encoders": "resident", "text_tokens": 512, "vae_dtype": "bf16",
           "vae_decode": "untiled", "runner": "diffusers"}
    e = E.estimate(comps, 1024, 1024, cfg=False, policy=pol)
    ours = e["peak_device"] - e["fixed"]["cuda_context"]
    assert abs(ours / (36.166 * GiB) - 1) < 0.03
    assert e["peak_phase"] == "vae_decode"
    comfy = E.estimate(comps, 1024, 1024, cfg=False, policy=dict(pol, runner="comfyui"))
    body = comfy["breakdown"]["vae_decode"]["activations"] - comfy["breakdown"]["vae_decode"]["conv_workspace"]
    dd = e["breakdown"]["vae_decode"]
    assert body < dd["activations"] < body * 2  # allocated: diffusers' decoder body holds more than ComfyUI's
    assert body < (dd["activations"] + dd["allocator_margin"]) / 3  # reserved: with its caching-allocator slack


def test_offload_keeps_the_streamed_layer_on_the_device():
    comps = _dm("flux_flux1-dev", "flux1")
    on = E.estimate(comps, 1024, 1024, cfg=False, policy={"_no_knobs": True})
    off = E.estimate(comps, 1024, 1024, cfg=False, policy={"_no_knobs": True, "offload_bytes": 1 << 50})
    assert off["breakdown"]["sample"]["weights"] == 0
    # FLUX.1's largest layer: a single block's linear1, 3072 -> 3*3072 + 12288 = 21504, bf16
    assert off["breakdown"]["sample"]["activations"] - on["breakdown"]["sample"]["activations"] == 21504 * 3072 * 2


@pytest.mark.parametrize("name,fam,text_tokens,measured", [
    ("flux_flux1-dev", "flux1", 512, 0.56),  # diffusers benchmarks, FLUX.1-dev group-offload-leaf
    ("sdxl_sd_xl_base_1.0", "sdxl", None, 0.20),  # diffusers benchmarks, SDXL group-offload-leaf
])
def test_group_offload_rows(name, fam, text_tokens, measured):
    e = E.estimate(_dm(name, fam), 1024, 1024, cfg=False,
                   policy={"_no_knobs": True, "offload_bytes": 1 << 50, "text_tokens": text_tokens})
    bd = e["breakdown"]["sample"]
    assert abs((bd["weights"] + bd["activations"]) / (measured * GiB) - 1) < 0.15


def test_unknown_runner_is_a_clear_error():
    with pytest.raises(UserError, match="runner"):
        E.estimate(_dm("flux_flux1-dev", "flux1"), 1024, 1024, policy={"runner": "tensorrt"})


def test_cli_runner_flag():
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    assert report.policy_from_args(p.parse_args(["x.safetensors", "--runner", "diffusers"]))["runner"] == "diffusers"
    assert report.policy_from_args(p.parse_args(["x.safetensors"]))["runner"] == "comfyui"


def test_measured_rows_are_sourced_and_mapped():
    d = json.loads(DATA.read_text())
    ids = [r["id"] for r in d["rows"]]
    assert len(ids) == len(set(ids)) and len(ids) >= 15
    for r in d["rows"]:
        assert r["source"].startswith("http") and r["measured_gib"] > 0 and r["measure"]
        assert r["phase"] in ("sample", "sample-offload", "pipeline", "weights")
        # working_*: a peak measured as the rise over the loaded model (benchmarks/bench_estimate.measured)
        assert r["compare"] in ("torch_allocated", "torch_reserved", "nvidia_smi", "weights", "working_allocated",
                                "working_reserved")
        for name in r.get("components") or []:  # a stored layout or one of the benchmark's synthetic components
            assert name.startswith("synth:") or layouts.load(name)


def test_diffusers_decodes_the_whole_batch_in_one_call():
    # FluxPipeline / StableDiffusionXLPipeline call vae.decode on every latent at once, whatever the free memory,
    # and never retry in tiles; ComfyUI splits the batch by free memory
    px = 1024 * 1024
    per = 975 * px * 2 + 3 * px * 4
    p = V.phase("kl", [16, 16, 128, 128], "bf16", free_bytes=2 * GiB, mode="auto", runner="diffusers", device="cuda")
    assert (p["batch"], p["bytes"], p["tiled"]) == (16, 16 * per, False)
    c = V.phase("kl", [16, 16, 128, 128], "bf16", free_bytes=2 * GiB, mode="auto", runner="comfyui", device="cuda")
    assert c["batch"] < 16


@pytest.mark.parametrize("batch,measured", [(1, 33.851), (4, 39.49), (8, 47.509), (16, 61.548)])
def test_flux_batch_under_diffusers_follows_the_measured_peaks(batch, measured):
    # REGRESSION rows diffusers-torchao-flux1-dev-bf16-bs{1,4,8,16}-peak (sayakpaul/diffusers-torchao README at 9b9f238,
    # max_memory_allocated, H100): the peak grows by about 1.9 GiB per image, the whole batch decoded at once
    comps = [c for n, f in (("flux_flux1-dev", "flux1"), ("te_clip_l", "clip"), ("te_t5xxl_fp16", "t5"), ("vae_flux_ae", "vae"))
             for c in families.split_components(_table(n), f)]
    pol = {"_no_knobs": True, "models": "resident", "text_encoders": "resident", "text_tokens": 512, "vae_dtype": "bf16",
           "vae_decode": "untiled", "runner": "diffusers"}
    e = E.estimate(comps, 1024, 1024, 1, batch, cfg=False, policy=pol)
    assert abs(e["peak_torch"] / (measured * GiB) - 1) < 0.03
