"""A planned tiled decode that still runs out of memory (nodes/fit_vae.decode_in_tiles): halved and retried down to
ComfyUI's own fallback tile, never a lost image where ComfyUI's decode would have tiled and finished. The second GPU
run's guard lost its Wan 2.1 832x480x33 decode exactly so (benchmarks/results/gpu_fit_to_card.json, 'OOM')."""
import pytest

from gpu_garden.nodes import fit_vae as V
from support.fit_stubs import Samples


class OutOfMemoryError(RuntimeError):  # torch.OutOfMemoryError's name, without torch
    pass


class TiledVAE:
    """Runs out of memory for a tile side above `fits` (latent units); records every tile it was asked for."""

    def __init__(self, fits, latent_dim=3, compression=8):
        self.fits, self.latent_dim, self.compression, self.asked = fits, latent_dim, compression, []

    def spacial_compression_decode(self):
        return self.compression

    def decode_tiled(self, samples, **args):
        self.asked.append(args)
        if args["tile_x"] > self.fits:
            raise OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB")
        return "pixels"


@pytest.fixture(autouse=True)
def quiet_state(monkeypatch):
    monkeypatch.setitem(V._state, "last", {"op": "decode", "tiled": True})


def test_a_planned_tile_that_runs_out_is_halved_until_one_fits():
    vae = TiledVAE(fits=40)
    plan = {"tile_x": 80, "tile_y": 80, "overlap": 10}  # the guard's 640 px tile for Wan 2.1 at a 3.75 GiB cap
    assert V.decode_in_tiles(vae, Samples((1, 16, 9, 60, 104)), plan) == "pixels"
    assert vae.asked == [{"tile_x": 80, "tile_y": 80, "overlap": 10}, {"tile_x": 40, "tile_y": 40, "overlap": 5}]
    assert V._state["last"]["retries"] == [{"tile": vae.asked[0], "then": vae.asked[1]}]


def test_the_last_try_is_comfyuis_own_fallback_tile():
    # comfy.sd VAE.decode after an OOM, video: tile 256 // spacial_compression_decode(), overlap (1, tile // 4, ...)
    vae = TiledVAE(fits=32)
    assert V.decode_in_tiles(vae, Samples((1, 16, 9, 60, 104)), {"tile_x": 80, "tile_y": 80, "overlap": 10}) == "pixels"
    assert [a["tile_x"] for a in vae.asked] == [80, 40, 32] and vae.asked[-1] == {"tile_x": 32, "tile_y": 32, "overlap": 8}
    img = TiledVAE(fits=64, latent_dim=2)  # an image VAE: decode_tiled_'s defaults, 64 with overlap 16
    assert V.decode_in_tiles(img, Samples((1, 4, 192, 192)), {"tile_x": 160, "tile_y": 160, "overlap": 20}) == "pixels"
    assert [a["tile_x"] for a in img.asked] == [160, 80, 64] and img.asked[-1]["overlap"] == 16


def test_out_of_memory_at_comfyuis_own_tile_is_raised_and_other_errors_are_not_retried():
    vae = TiledVAE(fits=8)
    with pytest.raises(OutOfMemoryError):
        V.decode_in_tiles(vae, Samples((1, 16, 9, 60, 104)), {"tile_x": 80, "tile_y": 80, "overlap": 10})
    assert [a["tile_x"] for a in vae.asked] == [80, 40, 32]

    class Broken(TiledVAE):
        def decode_tiled(self, samples, **args):
            self.asked.append(args)
            raise RuntimeError("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR")

    b = Broken(fits=0)
    with pytest.raises(RuntimeError, match="CUDNN"):
        V.decode_in_tiles(b, Samples((1, 16, 9, 60, 104)), {"tile_x": 80, "tile_y": 80, "overlap": 10})
    assert len(b.asked) == 1


def test_a_time_chunk_is_kept_and_a_tile_at_the_floor_is_tried_once():
    tries = V.smaller_tiles({"tile_x": 64, "tile_y": 64, "overlap": 8, "tile_t": 8, "overlap_t": 1}, 5, 32)
    assert tries == [{"tile_x": 64, "tile_y": 64, "overlap": 8, "tile_t": 8, "overlap_t": 1},
                     {"tile_x": 32, "tile_y": 32, "overlap": 8, "tile_t": 8, "overlap_t": 1}]
    assert V.smaller_tiles({"tile_x": 32, "tile_y": 32, "overlap": 4, "tile_t": 8}, 4, 32) == [
        {"tile_x": 32, "tile_y": 32, "overlap": 4}]
