"""HunyuanVideo's VAE decode as ComfyUI 0.8.0 runs it (est18b): vae.HV_DECODE / HV_FRAME / HV_DECODE_SHORT against the
bytes gpu_garden's tracer read off ComfyUI's AutoencoderKL (3-D) decode on the meta device, bf16."""
import pytest

from gpu_garden.memory.estimate import vae as V

# (width, height, frames, latent frames, traced activation bytes): 848x480x25 and 1280x720x65 are the bench_estimate
# REGRESSION rows the coefficients were fitted on; 1, 5, 9, 13 frames the one-off traces HV_DECODE_SHORT was read off
TRACED = [(848, 480, 25, 7, 9_235_947_008), (1280, 720, 65, 17, 21_240_725_504), (848, 480, 1, 1, 1_105_128_960),
          (848, 480, 5, 2, 4_764_574_720), (848, 480, 9, 3, 6_597_687_808), (848, 480, 13, 4, 7_788_989_440)]


@pytest.mark.parametrize("w,h,frames,lat_t,traced", TRACED, ids=[f"{r[0]}x{r[1]}x{r[2]}" for r in TRACED])
def test_hunyuan_video_decode_matches_the_trace(w, h, frames, lat_t, traced):
    got = V.vae_decode_bytes("hunyuan-video", [1, 16, lat_t, h // 8, w // 8], "bf16")
    assert abs(got / traced - 1) < 0.01, (got, traced)


def test_hunyuan_video_decode_by_hand():
    # 848x480x25: (11234 + 4.46 x 25) elements per output pixel, bf16: chunks of 2 latent frames, so the length only adds
    # the decoded frames kept and the mid block's output
    assert V.vae_decode_bytes("hunyuan-video", [1, 16, 7, 60, 106], "bf16") == int((11234 + 4.46 * 25) * 848 * 480 * 2)
    # fp32 doubles it; the batch dimension is ignored (one sample)
    assert V.vae_decode_bytes("hunyuan-video", [3, 16, 7, 60, 106], "fp32") == int((11234 + 4.46 * 25) * 848 * 480 * 4)
    # two latent frames: the first chunk alone (5 frames)
    assert V.vae_decode_bytes("hunyuan-video", [1, 16, 2, 60, 106], "bf16") == int(5852.7 * 848 * 480 * 2)


def test_comfyuis_own_decode_heuristic_is_kept_for_its_batch():
    # VAE.decode still divides free memory by memory_used_decode: 2800 x min(8, 25) x 60 x 106 x 64 x 2 bytes
    assert V.comfy_decode_heuristic("hunyuan-video", [1, 16, 7, 60, 106], "bf16") == 2800 * 8 * 60 * 106 * 64 * 2


def test_flux2_batches_cond_and_uncond_under_comfyui():
    """model_base.Flux2.extra_conds (ComfyUI 0.8.0) left-pads the Mistral 3 context to 512 tokens, so a prompt and its
    negative have equal shapes and CONDRegular concatenates them: with CFG on, one call of batch 2 (not two passes)."""
    from gpu_garden.memory.estimate import families, formula as E, layouts
    comps = families.split_components(layouts.table("flux2_flux2_dev_bf16"))
    for cfg, runner, want in ((None, "comfyui", 1), ("on", "comfyui", 2), (True, "comfyui", 2), ("on", "diffusers", 2)):
        e = E.estimate(comps, 1024, 1024, 1, 1, cfg=cfg, policy={"_no_knobs": True, "runner": runner})
        assert e["family"] == "flux2" and e["latent"]["batch_in_model"] == want, (cfg, runner)
        assert e["latent"]["text_tokens"] == 512
