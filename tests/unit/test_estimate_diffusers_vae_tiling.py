"""diffusers' AutoencoderKL tiling (enable_tiling; autoencoder_kl.py tiled_decode): tiles of the VAE config's
sample_size px every 3/4 tile, each decoded for the whole batch, the decoded tiles kept until blended; no tiling when the
latent fits one tile. Expected bytes written out: the KL decode in fp16 is 1216 elements per pixel
(vae.DIFFUSERS_KL_DECODE_DTYPE, newer GPUs) in the VAE dtype plus its fp32 output; a decoded tile holds 3 channels. A tile of the wrong size or step, tiles not held,
or one sample where the batch runs at once break a test."""
from gpu_garden.memory.estimate import families, formula as E, layouts, vae

TILE_512_FP16 = (1216 * 2 + 3 * 4) * 512 * 512  # one 512x512 tile's decode
# 1024x1024 in 512 px tiles every 384 px: 3 x 3 tiles (latent 64, 64, 32 wide); the peak is the fifth tile (the second
# full tile of the second row) with the four before it held: three 512x512 and one 512x256, 3 channels in fp16
HELD_BEFORE_FIFTH = (3 * 512 * 512 + 512 * 256) * 3 * 2


def test_sd1_vae_at_1024_in_diffusers_tiles():
    v = vae.phase("kl", [1, 4, 128, 128], "fp16", mode="tiled", runner="diffusers", tile_px=512)
    assert v["tiled"] and "9 tiles of 512 px" in v["how"]
    assert v["bytes"] == TILE_512_FP16 + HELD_BEFORE_FIFTH
    two = vae.phase("kl", [2, 4, 128, 128], "fp16", mode="tiled", runner="diffusers", tile_px=512)
    assert two["bytes"] == 2 * (TILE_512_FP16 + HELD_BEFORE_FIFTH)  # each tile for the whole batch
    sliced = vae.phase("kl", [2, 4, 128, 128], "fp16", mode="tiled", runner="diffusers", tile_px=512, slicing=True)
    assert sliced["bytes"] == TILE_512_FP16 + HELD_BEFORE_FIFTH + 3 * 1024 * 1024 * 2


def test_no_tiling_when_the_latent_fits_one_tile():
    v = vae.phase("kl", [1, 4, 128, 128], "fp32", mode="tiled", runner="diffusers", tile_px=1024)
    assert not v["tiled"] and v["bytes"] == (975 * 4 + 3 * 4) * 1024 * 1024
    assert v["how"].startswith("diffusers' VAE tiling does not tile at this size")


def test_the_estimate_takes_the_family_tile_and_comfyui_keeps_its_node():
    n = "sdxl_sd_xl_base_1.0"
    comps = families.split_components(layouts.table(n), n)
    pol = {"_no_knobs": True, "vae_decode": "tiled", "vae_dtype": "fp16"}
    e = E.estimate(comps, 2048, 2048, policy=dict(pol, runner="diffusers"))
    assert "9 tiles of 1024 px" in e["vae"]["how"]
    e = E.estimate(comps, 1024, 1024, policy=dict(pol, runner="diffusers"))
    assert not e["vae"]["tiled"]
    e = E.estimate(comps, 1024, 1024, policy=dict(pol, runner="comfyui"))
    assert e["vae"]["tiled"] and e["vae"]["how"].startswith("VAE Decode (Tiled);")


def test_tiling_diffusers_was_not_read_for_says_whose_figure_it_is():
    """A Wan VAE (or a KL VAE of a family without a diffusers tile size) tiled under --runner diffusers takes ComfyUI's
    VAE Decode (Tiled) figure: the line says so rather than naming the node as if the pipeline ran it."""
    v = vae.phase("wan21", [1, 16, 9, 60, 104], "bf16", mode="tiled", runner="diffusers")
    assert v["tiled"] and v["bytes"] == v["tiled_bytes"]
    assert v["how"].startswith("VAE Decode (Tiled)'s figure (diffusers' own tiling is figured only for")
    assert vae.phase("wan21", [1, 16, 9, 60, 104], "bf16", mode="tiled")["how"] == "VAE Decode (Tiled)"


# InvokeAI's VAE benchmark (invoke-ai/InvokeAI 7785061e vae_benchmarks/benchmark_sd_vae.py) sets the SDXL VAE's
# tile_sample_min_size to 512 itself. 2048x2048 is latent 256: tiles start every 48 latents (0, 48, ..., 240), 6 per
# side, five 512 px wide and the last 128 px. The peak is tile (4, 4), the last full one, with four whole rows
# (5 x 512x512 + 512x128 each) and four full tiles of the fifth row held, 3 channels in fp16.
HELD_BEFORE_TILE_44 = (4 * (5 * 512 * 512 + 512 * 128) + 4 * 512 * 512) * 3 * 2


def test_a_runner_tile_size_wins_over_the_config():
    n = "sdxl_sd_xl_base_1.0"
    comps = families.split_components(layouts.table(n), n)
    pol = {"_no_knobs": True, "vae_decode": "tiled", "vae_dtype": "fp16", "runner": "diffusers", "tile": {"tile": 512}}
    e = E.estimate(comps, 2048, 2048, policy=pol)
    assert "36 tiles of 512 px" in e["vae"]["how"]
    assert e["vae"]["bytes"] == TILE_512_FP16 + HELD_BEFORE_TILE_44
