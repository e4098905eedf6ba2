"""ux50's estimate findings (a newcomer's review): the smallest common card beside the verdict (B3)."""
import pytest

from gpu_garden.memory.estimate import layouts
from support.cli_run import estimate

SD15 = "sd15_v1-5-pruned-emaonly-fp16"


@pytest.fixture(scope="module")
def sd15(tmp_path_factory):
    return str(layouts.write_sparse(SD15, tmp_path_factory.mktemp("m") / "v1-5-pruned-emaonly-fp16.safetensors"))


@pytest.mark.parametrize("size", [("512", "512", "1"), ("512", "768", "4")])
def test_a_run_that_fits_4_gib_names_a_4_gb_card(sd15, capsys, size):
    """B3: SD1.5 (peak 2.57 GiB at 512x512, 3.51 GiB at 512x768 batch 4) printed "smallest common card: 6 GB" above
    "verdict: FITS in 4.00 GiB": the card list started at 6 GB. GTX 1650 and RTX 3050 Laptop users run it on 4 GB."""
    w, h, b = size
    rc, out, _ = estimate(capsys, sd15, "--width", w, "--height", h, "--batch", b, "--vram", "4", "--ram", "64",
                          "--dynamic-vram", "off")
    assert rc == 0 and "verdict: FITS in 4.00 GiB" in out, out
    assert "; smallest common card: 4 GB" in out, out
