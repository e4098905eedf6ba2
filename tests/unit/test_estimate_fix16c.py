"""Task fix16c: review16c findings on `gpu-garden estimate`; expected values by hand from the files' layouts and
ComfyUI 0.8.0's model_management, never from the code under test."""
import json

import pytest

from gpu_garden.memory.estimate import layouts
from support.cli_run import estimate

GiB = 1 << 30
DM_FP32 = 23802816640 * 2  # FLUX.1-dev's bf16 DiT held in fp32 on a CPU (unet_dtype without fp16/bf16)
# T5-XXL fp16, CLIP-L, ae: the models other than the running one. The ae's 83,819,683 parameters stay fp32 on a CPU
# (model_management.vae_dtype: no fp16/bf16 there; sd.py VAE.__init__ first_stage_model.to(vae_dtype)): 4 bytes each
# (ux21; 2 bytes before, as if cast to 16 bits as on a GPU)
KEPT = 9524621312 + 246120960 + 83819683 * 4


@pytest.fixture(scope="module")
def flux(tmp_path_factory):
    d = tmp_path_factory.mktemp("flux")
    return [str(layouts.write_sparse(n, d / f"{n}.safetensors")) for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")]


def test_device_cpu_is_judged_on_host_ram(flux, capsys):
    """R13. ComfyUI --cpu: vram_state DISABLED, each model loaded whole on the CPU, free_memory skipped for a CPU device:
    the DiT (47605633280 B in fp32) runs in RAM beside the models kept for reload (10106021004 B): over 16 GiB, so the
    run does not fit (exit 1); the old verdict counted only the 9.26 GiB kept and said fits."""
    argv = (*flux, "--width", "1024", "--height", "1024", "--device", "cpu", "--dynamic-vram", "off")
    rc, out, _ = estimate(capsys, *argv, "--ram", "16", "--json")
    j = json.loads(out)
    r = j["host_ram"]
    assert rc == 1 and j["verdict"] == "does not fit" and j["outcome"]["status"] == "does not fit"
    assert r["kept_for_reload"] == KEPT
    assert DM_FP32 + KEPT <= r["needed"] <= DM_FP32 + KEPT + 2 * GiB  # + the sampler's fp32 activations (< 2 GiB)
    assert j["min_vram_gb"] is None  # no card tier for a CPU run
    rc, out, _ = estimate(capsys, *argv, "--ram", "128")
    assert rc == 0 and "verdict: FITS in host RAM" in out and "smallest common card" not in out
    rc, _, err = estimate(capsys, *argv, "--ram", "16", "--vram", "12")
    assert rc == 2 and "--device cpu runs in host RAM" in err


@pytest.mark.parametrize("extra, words", [
    (("--text-tokens", "100000000"), "--text-tokens needs 0 (the encoder's own count) to 8192 tokens"),  # the node's max
    (("--ram", "1e9"), "--ram needs a positive number of GiB up to 1048576"),
    (("--reserve-vram", "100"), "--reserve-vram 100 leaves nothing of --vram 12 GiB"),
])
def test_upper_bounds_are_usage_errors(flux, capsys, extra, words):
    """R5: values past any machine were taken (a 7.6e9 GiB text encode, a 1e9 GiB RAM verdict); now one line, exit 2."""
    rc, out, err = estimate(capsys, *flux, "--width", "1024", "--height", "1024", "--vram", "12", *extra)
    assert rc == 2 and words in err and not out


def test_text_tokens_at_the_node_cap_runs(flux, capsys):
    rc, _, _ = estimate(capsys, *flux, "--width", "1024", "--height", "1024", "--vram", "12", "--text-tokens", "8192",
                        "--ram", "64", "--dynamic-vram", "off")
    assert rc != 2  # an estimate, not a usage error
