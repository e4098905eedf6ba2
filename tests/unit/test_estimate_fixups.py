"""Review fixes after the outcome round (task est-fixups): the outcome weighs host RAM, --frames 1 is a typed
size, the workflow route carries the outcome, one kept-weights rule, NATIVE_SIZE = ComfyUI 0.8.0's node defaults."""
import json

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.estimate import layouts
from gpu_garden.memory.units import GiB


@pytest.fixture(scope="module")
def flux(tmp_path_factory):
    """FLUX.1-dev bf16 + T5-XXL fp16 + CLIP-L + ae (bundled layouts, sparse files)."""
    d = tmp_path_factory.mktemp("models")
    return [str(layouts.write_sparse("flux_flux1-dev", d / "diffusion_models" / "flux1-dev.safetensors")),
            str(layouts.write_sparse("te_t5xxl_fp16", d / "text_encoders" / "t5xxl_fp16.safetensors")),
            str(layouts.write_sparse("te_clip_l", d / "text_encoders" / "clip_l.safetensors")),
            str(layouts.write_sparse("vae_flux_ae", d / "vae" / "ae.safetensors"))]


def run(capsys, *argv):
    try:
        rc = cli.main(["estimate", *argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_offload_that_does_not_fit_host_ram_does_not_fit(flux, capsys):
    """FLUX.1-dev bf16 at 1024² on 12 GiB leaves 11.38 GiB of weights in RAM: with 4 GiB of RAM that is not a run
    (host_ram said so, the outcome said runs with offload, exit 0)."""
    args = (*flux, "--width", "1024", "--height", "1024", "--vram", "12", "--dynamic-vram", "off", "--json")
    rc, out, _ = run(capsys, *args, "--ram", "4")
    j = json.loads(out)
    assert j["verdict"] == "does not fit" and j["host_ram"]["verdict"].startswith("does not fit")
    assert rc == 1 and j["outcome"]["status"] == "does not fit"
    assert "host RAM" in j["outcome"]["reason"] and "4.00 GiB available" in j["outcome"]["reason"]
    assert "11.38 GiB" in j["outcome"]["reason"]  # what ComfyUI would leave in RAM
    # 11.38 offloaded + 9.26 kept for reload = 20.64 GiB: 32 GiB of RAM holds it, so ComfyUI runs it offloaded
    rc, out, _ = run(capsys, *args, "--ram", "32")
    j = json.loads(out)
    assert rc == 0 and j["host_ram"]["verdict"] == "fits" and j["outcome"]["status"] == "runs with offload"
    # the text names the RAM as the reason
    rc, out, _ = run(capsys, *args[:-1], "--ram", "4")
    v = next(x for x in out.splitlines() if x.startswith("verdict:"))
    assert rc == 1 and v.startswith("verdict: DOES NOT FIT in 12.00 GiB") and "host RAM is short" in v
