"""Session 18, task fix18c: the estimate findings of review18b. Each test is written from the reviewer's example and
failed on the commit before its mend (the commit names the deliberate break that makes it fail again)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import phases, vae


@pytest.mark.parametrize("shape", [[1, 16, 0, 60, 106], [1, 16, -3, 60, 106], [1, 16, 5, 0, 106], [1, 16, 5, 60, -1],
                                   [0, 16, 5, 60, 106], [1, 0, 60, 106], [1, 4, 64]])
def test_latent_shapes_with_no_or_negative_extent_are_refused(shape):
    # review18b #6: zero latent frames decoded to 7.25 GiB instead of an error
    with pytest.raises(UserError, match="latent"):
        vae.vae_decode_bytes("hunyuan-video", shape)
    with pytest.raises(UserError, match="latent"):
        vae.phase("wan21", shape)
    with pytest.raises(UserError, match="latent"):
        vae.as_held("wan21", shape)
    with pytest.raises(UserError, match="latent"):
        vae.diffusers_hv_decode(shape, "bf16")
    with pytest.raises(UserError, match="latent"):
        phases.sample_activation_bytes("wan21", shape)


def test_a_sound_latent_shape_still_decodes():
    assert vae.vae_decode_bytes("hunyuan-video", [1, 16, 1, 60, 106]) > 0
    assert vae.vae_decode_bytes("kl", [1, 4, 64, 64]) > 0


def test_two_sample_decode_rows_mapped_after_their_first_reading_are_regression_rows():
    # review18b #4: ours_traced was rescaled to the trace's batch after these rows read -50 %: tuned on, not held out
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import bench_estimate as B
    rows = [("flux2", 1024, 1024, 1, "decode", "flash", 2), ("ltxv", 768, 512, 97, "decode", "flash", 2),
            ("hunyuan-video", 848, 480, 25, "decode", "flash", 2)]
    for r in rows:
        assert r in B.FIT and r not in B.HELD_OUT, r
    import estimate_traced  # FIT and HELD_OUT live there (bench_estimate re-exports them)
    src = Path(estimate_traced.__file__).read_text()
    assert "-50.1 %" in src and "Mapped after that reading" in src
