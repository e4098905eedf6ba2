"""Measured batch 37 (after first sight): the A14B decode row takes the Wan 2.1 VAE's latent geometry.

zysno1/Wan2.2-Enhanced's 04_14B_Speed_Preview_480p report (78956cee): Wan2.2 T2V-A14B decodes with the Wan 2.1 VAE
(Wan2_1_VAE, 8x spatial compression), fp32 in Wan's runner, 832x480x161; the stage's working figure is 8185.25 MB.
The collector copied the family key from batch 18's TI2V-5B decode row (the Wan 2.2 VAE, 16x spatial), and a VAE-only
row takes its latent geometry from the row's family: -74.2 % at first sight. Expected figures are the report's printed
MB, typed here, not computed by the estimate."""
from support.measured_rows import rows as _rows, scored as _scored

GiB = 2**30
ROW = "wan22-enhanced-t2v-a14b-vae-fp32-decode-working-832x480x161"
WORKING = 8185.25 * 2**20


def test_every_wan21_vae_row_carries_the_vaes_family():
    row, = _rows({ROW})
    assert row["components"] == ["vae_wan_2.1_vae"]
    assert row["family"] == "wan21" and row["policy"]["family"] == "wan21"


def test_the_a14b_decode_reads_within_10_percent_of_the_printed_working_figure():
    row, = _rows({ROW})
    assert abs(_scored([row])[ROW] / WORKING - 1) < 0.10


def test_the_5b_vaes_geometry_would_read_a_quarter_of_it():
    # the first-sight mapping (family wan22): a latent of a quarter the pixels, far under the printed figure
    row, = _rows({ROW})
    old = dict(row, family="wan22", policy=dict(row["policy"], family="wan22"))
    assert _scored([old])[ROW] < 0.5 * WORKING


def test_the_row_is_a_regression_row():
    from estimate_measured import MEASURED_FIT
    assert ROW in MEASURED_FIT
