"""Who retries a VAE phase tiled: one rule (vae.retries_tiled) for the decode's batch, its retry and the encode's."""
from gpu_garden.memory.estimate import vae


def test_only_comfyui_retries_a_vae_phase_tiled():
    # comfy/sd.py VAE.decode / VAE.encode catch the OOM and retry tiled; diffusers' pipelines call vae.decode once,
    # Wan's generate.py calls WanVAE.decode once per video: no retry
    assert vae.retries_tiled("comfyui") and vae.retries_tiled(None)
    assert not vae.retries_tiled("diffusers") and not vae.retries_tiled("wan")
