"""diffusers' KL decode on a Pascal GPU (policy gpu_arch 'pascal', vae.DIFFUSERS_KL_DECODE_ARCH): fp16 holds far more
per output pixel than on the newer GPUs DIFFUSERS_KL_DECODE was fitted on, fp32 only the trace's floor. The expected
figures are the measurements (benchmarks/data/diffusion_measured.json, gperdrizet-u6 rows: torch.cuda.max_memory_allocated
on a Tesla P100, MiB as the harness printed them), not the estimate's own output; the bytes-per-pixel test counts the
512 x 512 decode from the table's numbers and the fp32 output (3 channels x 4 bytes)."""
import argparse
import json
import sys
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import report, vae as V

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_estimate as B  # noqa: E402

HW = 512 * 512
LAT = [1, 4, 64, 64]
MiB = 1 << 20


def test_the_table_replaces_the_default_only_where_it_has_a_row():
    assert V.vae_decode_bytes("kl", LAT, "fp16", "diffusers", gpu_arch="pascal") == 1763 * HW * 2 + 12 * HW
    assert V.vae_decode_bytes("kl", LAT, "fp32", "diffusers", gpu_arch="pascal") == 765 * HW * 4 + 12 * HW
    assert V.vae_decode_bytes("kl", LAT, "fp16", "diffusers") == 1216 * HW * 2 + 12 * HW  # newer GPUs' fp16 row
    assert V.vae_decode_bytes("kl", LAT, "fp32", "diffusers") == 975 * HW * 4 + 12 * HW  # the fitted default
    # bf16 on Pascal is not measured: the default; ComfyUI's decoder is not this term's
    assert V.vae_decode_bytes("kl", LAT, "bf16", "diffusers", gpu_arch="pascal") == V.vae_decode_bytes("kl", LAT, "bf16", "diffusers")
    assert V.vae_decode_bytes("kl", LAT, "fp16", "comfyui", gpu_arch="pascal") == V.vae_decode_bytes("kl", LAT, "fp16", "comfyui")


MEASURED = {  # MiB, max_memory_allocated (the rows' 'measure')
    "gperdrizet-u6-sd14-fp16-sequential-offload-512-p100": 1463.6,
    "gperdrizet-u6-pixart-alpha-xl2-512-fp16-sequential-offload-512-p100": 890.5,
    "gperdrizet-u6-sdxl-base-fp16-sequential-offload-512-p100": 777.3,
    "gperdrizet-u6-sd14-fp16-resident-512-p100": 3519.1,
    "gperdrizet-u6-pixart-alpha-xl2-512-fp16-resident-512-p100": 13223.0,
}


def test_pascal_rows_within_two_percent():
    ours = {r["id"]: o for r, o, _, _ in B.measured() if r["id"] in MEASURED}
    assert set(ours) == set(MEASURED)
    for rid, mib in MEASURED.items():
        assert abs(ours[rid] / MiB / mib - 1) < 0.02, (rid, ours[rid] / MiB, mib)


def test_the_rows_name_the_generation():
    rows = [r for r in json.loads(B.MEASURED.read_text())["rows"] if r["id"].startswith("gperdrizet-u6-") and r.get("policy")]
    assert rows and all(r["policy"]["gpu_arch"] == "pascal" for r in rows)


def test_an_unknown_generation_is_a_clear_error():
    comps = B._measured_components(next(r for r in json.loads(B.MEASURED.read_text())["rows"]
                                        if r["id"] == "gperdrizet-u6-sd14-fp16-resident-512-p100"))
    with pytest.raises(UserError, match="gpu arch must be one of pascal"):
        B.E.estimate(comps, 512, 512, policy={"_no_knobs": True, "gpu_arch": "kepler"})


def test_cli_flag():
    p = argparse.ArgumentParser()
    report.add_cli_arguments(p)
    assert report.policy_from_args(p.parse_args(["x.safetensors", "--gpu-arch", "pascal"]))["gpu_arch"] == "pascal"
    assert report.policy_from_args(p.parse_args(["x.safetensors"]))["gpu_arch"] is None


def test_newer_gpu_fp16_row_keeps_the_fitted_reserved_total():
    # vae.DIFFUSERS_KL_DECODE_DTYPE moves what the first image allocates, not what the allocator reserves for it
    # (DIFFUSERS_KL_RESERVED, 2360, fitted on the reserved rows): 1216 allocated + 1144 slack; bf16 keeps 975 + 1385
    for dt, alloc in (("fp16", 1216), ("bf16", 975)):
        assert V.vae_decode_bytes("kl", LAT, dt, "diffusers") == alloc * HW * 2 + 12 * HW
        assert V.allocator_slack_bytes("kl", LAT, dt, "diffusers") == (2360 - alloc) * HW * 2
    # Pascal's fp16 row is its own (DIFFUSERS_KL_DECODE_ARCH), its slack the default one
    assert V.allocator_slack_bytes("kl", LAT, "fp16", "diffusers", gpu_arch="pascal") == (2360 - 975) * HW * 2
