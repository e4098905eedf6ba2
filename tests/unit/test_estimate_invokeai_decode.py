"""diffusers' AutoencoderKL decode (runner "diffusers") against InvokeAI's own figures for the same decoder.

InvokeAI decodes SD 1.x / SDXL latents through diffusers' AutoencoderKL (invokeai/app/invocations/latents_to_image.py):
the VAE's attention keeps diffusers' default SDPA processor (InvokeAI sets attention processors on the UNet only), so in
fp32 mode only post_quant_conv, conv_in and the mid block go back to 16 bits and the up blocks, where the peak is, run
in fp32; no tiling unless asked. Published figures bracket our decode:

- allocated: InvokeAI's VAE benchmark (benchmarks/data/diffusion_measured.json invokeai-vaebench-sdxl-*, batches 18 and
  33: working max_memory_allocated of the decode alone, fp16 and fp32, 512-2048 px); InvokeAI's first working-memory
  constant, 960 elements per output pixel (commit 299eb94a, 2024-12-19, "set based on memory _allocations_" per PR
  invoke-ai/InvokeAI#7674), sits under that benchmark's fp16 figures (1216 elements) and was replaced as the reference;
- reserved under cudaMallocAsync: the same PR's three measured decodes (benchmarks/data/diffusion_measured.json,
  invokeai-7674-*, "All tests run with pytorch_cuda_alloc_conf: backend:cudaMallocAsync").

Our allocated figure must be near the first and under every measured reserved figure; our reserved figure under the
native allocator (decode + DIFFUSERS_KL_SLACK, the same line the diffusers hybrid-decode docs rows follow) must be above
them. A doubled DIFFUSERS_KL_DECODE, or no slack, breaks a test here."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import vae as V

GiB = 1024 ** 3
DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "diffusion_measured.json"
ROWS = {  # row id: latent shape, decode dtype
    "invokeai-7674-sd1-vae-fp32-decode-512": ([1, 4, 64, 64], "fp32"),
    "invokeai-7674-sdxl-vae-fp16-decode-1024": ([1, 4, 128, 128], "fp16"),
    "invokeai-7674-sdxl-vae-fp32-decode-1024": ([1, 4, 128, 128], "fp32"),
}


def test_allocated_decode_against_invokeai_vae_benchmark():
    # InvokeAI's later VAE benchmark measured this decoder's allocations directly (diffusion_measured.json batches 18 and
    # 33, working max_memory_allocated, the SDXL VAE alone, untiled): fp16 1216.4-1220 elements per output pixel, above
    # the first constant's 960 (299eb94a), and fp32 960.3-962; ours within 2 % in both (a 2x error, or fp16 at the old
    # 975, breaks it)
    rows = [r for r in json.loads(DATA.read_text())["rows"] if r["id"].startswith("invokeai-vaebench-sdxl-vae-")
            and "-tiled-" not in r["id"]]
    assert len(rows) == 10  # fp16 at 512, 768, 1024, 1536 (batch 18), 2048; fp32 at the same five
    for r in rows:
        dt, px = r["policy"]["vae_dtype"], r["width"]
        ours = V.vae_decode_bytes("kl", [1, 4, px // 8, px // 8], dt, "diffusers")
        assert abs(ours / (r["measured_gib"] * GiB) - 1) < 0.02, (r["id"], ours / GiB)


@pytest.mark.parametrize("rid", sorted(ROWS))
def test_async_reserved_sits_between_our_allocated_and_native_reserved(rid):
    row = next(r for r in json.loads(DATA.read_text())["rows"] if r["id"] == rid)
    assert "cudaMallocAsync" in row["settings"]
    latent, dtype = ROWS[rid]
    assert row["policy"]["vae_dtype"] == dtype and row["compare"] == "working_reserved"
    measured = row["measured_gib"] * GiB
    allocated = V.vae_decode_bytes("kl", latent, dtype, "diffusers")
    native_reserved = allocated + V.allocator_slack_bytes("kl", latent, dtype, "diffusers")
    assert allocated < measured < native_reserved
