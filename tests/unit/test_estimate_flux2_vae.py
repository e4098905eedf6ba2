"""FLUX.2's VAE decodes 16 px per latent pixel: ComfyUI 0.8.0 (comfy/sd.py, 'bn.running_mean') patchifies its 32 latent
channels 2x2 into 128 at 1/16 of the image (upscale_ratio * 2, latent_channels * 4, memory_used_decode * 4); diffusers'
Flux2Pipeline unpatchifies before AutoencoderKLFlux2.decode. Either way a 1024x1024 image is 1024x1024 output pixels.
Expected bytes written out: diffusers' KL decode is 975 elements a pixel in the VAE dtype plus its fp32 output
(vae.DIFFUSERS_KL_DECODE), ComfyUI's heuristic 2178 x latent area x 64, x 4 for this latent. Reading the 64x64 latent at
8 px (a 512x512 decode, a quarter of the pixels) breaks each test."""
from gpu_garden.memory.estimate import vae

FLUX2_1024 = [1, 128, 64, 64]  # EmptyFlux2LatentImage at 1024x1024: 128 channels, 1024 / 16
FLUX1_1024 = [1, 16, 128, 128]  # the FLUX.1 AE's latent of the same image


def test_flux2_latent_decodes_its_full_image():
    assert vae.vae_decode_bytes("kl", FLUX2_1024, "bf16", runner="diffusers") == (975 * 2 + 3 * 4) * 1024 * 1024
    for dev in ("cuda", None):  # the same decoder on the same output pixels as FLUX.1's AE, workspace included
        assert vae.vae_decode_bytes("kl", FLUX2_1024, "bf16", device=dev) == vae.vae_decode_bytes("kl", FLUX1_1024, "bf16", device=dev)


def test_flux2_comfy_heuristic_and_node_tiles():
    assert vae.comfy_decode_heuristic("kl", FLUX2_1024, "bf16") == 2178 * 64 * 64 * 64 * 4 * 2
    # VAE Decode (Tiled) at its 512 px default: 32 latent pixels of FLUX.2 (64 of FLUX.1)
    assert vae.tile_latent_shape("kl", FLUX2_1024, False, {"tile": 512})[-2:] == [32, 32]
    assert vae.tile_latent_shape("kl", FLUX1_1024, False, {"tile": 512})[-2:] == [64, 64]
