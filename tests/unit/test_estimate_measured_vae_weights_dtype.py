"""Measured batch 35 (after first sight, etune35): a weights row holds the VAE in the dtype the run keeps it in. ComfyUI
moves the VAE to its vae_dtype on load (comfy/sd.py VAE.__init__: first_stage_model.to(vae_dtype)), so PR #12227's
'Model WanVAE prepared for dynamic VRAM loading. 484MB Staged.' (policy vae_dtype fp32) is the 16-bit Wan 2.1 VAE file
at 4 bytes a parameter; the bench counted the file's 2 (-50 %). bench_estimate.weights_as_held takes the VAE as the
estimate holds it (formula: w_vae at the decode dtype). A diffusers SDXL pipeline's decode-time upcast
(vae.UPCAST_WHY) is not a load dtype: after pipe.to('cuda'), before the run, that VAE is still fp16.
Expected bytes are the layout's parameter count times the bytes a parameter, counted here, not by the estimate."""
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402


from support.measured_rows import rows as _rows, scored as _scored  # noqa: E402


def _params(name):
    return sum(math.prod(sh) for _, sh in B.table(name).values())


FP32 = "comfyui-12227-wan21-vae-fp32-staged-weights"
BF16 = "comfyui-12506-wan21-vae-bf16-staged-weights"


def test_a_vae_staged_in_fp32_is_held_at_four_bytes_a_parameter():
    rows = _rows({FP32, BF16})
    got = _scored(rows)
    n = _params("vae_wan_2.1_vae")
    assert got[FP32] == 4 * n
    assert got[BF16] == 2 * n
    # the published figures: 484 MB and 242 MB staged, within 0.5 % of 4 and 2 bytes a parameter
    meas = {r["id"]: r["measured_gib"] * 2**30 for r in rows}
    assert abs(got[FP32] / meas[FP32] - 1) < 0.005 and abs(got[BF16] / meas[BF16] - 1) < 0.005


def test_a_decode_time_upcast_is_not_the_loaded_dtype():
    # gperdrizet-u6's pipe.to('cuda') OOM: the fp16 SDXL pipeline's VAE upcasts inside the decode, not on load
    rid = "gperdrizet-u6-sdxl-base-fp16-pipe-to-cuda-oom-gtx1070-weights-bound"
    row, = _rows({rid})
    got = _scored([row])[rid]
    from gpu_garden.memory.estimate import formula as E
    e = E.estimate(B._measured_components(row), row["width"], row["height"], row["frames"], row["batch"], cfg=row["cfg"],
                   policy={"_no_knobs": True, **row["policy"]})
    assert e["_ctx"]["vae_dtype"] == "fp32"   # the decode does run in fp32
    vae = next(c for c in e["_ctx"]["components"] if c["role"] == "vae")
    rest = sum(c["resident"] for c in e["_ctx"]["components"] if c["role"] != "vae")
    assert got == rest + 2 * sum(math.prod(sh) for _, sh in vae["table"].values())
