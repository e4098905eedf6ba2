"""ltx63: LTX-2's own video VAE, and its audio VAE + vocoder decode, as ComfyUI 0.8.0 runs them.

The video VAE. comfy/sd.py:464-476 builds LTX-2's VideoVAE from the checkpoint's "config" metadata ("vae"), so its keys
and size are not LTX-Video 0.9's, which stood in before. Its config (comfy_recipes.LTX_2_VAE) is VideoVAE's version-2
blocks without timestep conditioning, as Lightricks/LTX-2's vae/config.json gives it (diffusers AutoencoderKLLTX2Video:
decoder_block_out_channels 256/512/1024, decoder_layers_per_block 5,5,5,5, timestep_conditioning false). Expected
figures come from that source, not from the estimate: diffusers 0.37.0's AutoencoderKLLTX2Video built on the meta
device at that config has 1,222,479,601 parameters, and ComfyUI's VideoVAE adds five 128-wide statistics buffers
(per_channel_statistics: 640 values), so 1,222,480,241 values, 2 bytes each in BF16. Deliberate error checked to fail:
the old FAMILY_FILES (vae_ltxv_v0.9, 838,388,578 bytes)."""
import pytest

from gpu_garden.memory.estimate import formula, layouts, report, vae

LTX2_VAE_VALUES = 1_222_479_601 + 5 * 128       # diffusers' parameters + ComfyUI's statistics buffers
LTX2_VAE_BYTES = 2 * LTX2_VAE_VALUES            # 2,444,960,482 (BF16)
LTXV09_VAE_BYTES = 2 * 419_194_289              # the stand-in before: 838,388,578


def _est(*files, **kw):
    comps, _ = report.components(list(files))
    return formula.estimate(comps, 768, 512, 97, **kw)


def test_the_ltx2_video_vae_layout_is_its_own():
    lay = layouts.load("vae_ltx-2_video_vae")
    t = lay["tensors"]
    assert len(t) == 187
    assert sum(layouts.tensor_nbytes(v["dtype"], v["shape"]) for v in t.values()) == LTX2_VAE_BYTES
    # the decoder as LTX-2's vae/config.json describes it: 1024 channels at the top, 5 layers a block, 128 at the bottom
    assert t["decoder.conv_in.conv.weight"]["shape"] == [1024, 128, 3, 3, 3]
    assert t["decoder.up_blocks.0.res_blocks.4.conv2.conv.weight"]["shape"] == [1024, 1024, 3, 3, 3]
    assert "decoder.up_blocks.0.res_blocks.5.conv1.conv.weight" not in t
    assert t["decoder.up_blocks.1.conv.conv.weight"]["shape"] == [4096, 1024, 3, 3, 3]   # residual depth-to-space, x2
    assert t["decoder.conv_out.conv.weight"]["shape"] == [48, 128, 3, 3, 3]              # 3 channels x 4 x 4 patch
    assert t["encoder.down_blocks.8.res_blocks.1.conv2.conv.weight"]["shape"] == [2048, 2048, 3, 3, 3]
    assert not [k for k in t if "time_embedder" in k or "scale_shift_table" in k]        # no timestep conditioning
    # where ComfyUI reads it: metadata "config" -> "vae" (sd.py:473-475)
    assert '"timestep_conditioning": false' in lay["__metadata__"]["config"]


def test_ltx2_names_its_own_video_vae():
    assert layouts.FAMILY_FILES["ltx-2"]["vae"] == "vae_ltx-2_video_vae"
    assert layouts.FAMILY_FILES["ltxv"]["vae"] == "vae_ltxv_v0.9"


def test_estimate_ltx2_counts_its_own_video_vae():
    est = _est("ltx-2")
    assert est["weights"]["vae"] == LTX2_VAE_BYTES != LTXV09_VAE_BYTES
    assert est["breakdown"]["vae_decode"]["weights"] == LTX2_VAE_BYTES   # bf16, as ComfyUI runs it (working dtypes bf16, fp32)


# ComfyUI's VideoVAE at LTX-2's config traced on meta (gpu_garden's tracer, bf16, untiled decode; ComfyUI 0.8.0):
# activations at the peak. The LTX-Video decode figures (vae.LTXV_DECODE*) hold for it: the decoder differs from
# 0.9's in weights, not in what it holds at its peak (docs/estimate-accuracy.md, "Task ltx63").
LTX2_DECODE_TRACED = {(768, 512, 97): 3_718_253_568, (768, 512, 161): 6_146_296_832, (768, 512, 25): 986_704_896,
                      (512, 512, 25): 658_402_304, (1216, 704, 121): 10_063_424_512, (1024, 1024, 9): 1_010_576_384}


@pytest.mark.parametrize("size", sorted(LTX2_DECODE_TRACED))
def test_ltx2_decode_activations_against_the_trace(size):
    w, h, f = size
    ours = vae.vae_decode_bytes("ltxv", [1, 128, (f - 1) // 8 + 1, h // 32, w // 32], "bf16")
    assert abs(ours / LTX2_DECODE_TRACED[size] - 1) < 0.02


# The audio decode (LTXVAudioVAEDecode: AudioVAE.decode, audio_vae.py:196-210). ComfyUI's CausalAudioAutoencoder and
# Vocoder at their default configs (LTX-2's: ltx59's key fixture) traced on meta with gpu_garden's tracer, fp32 (the
# module is built in the default dtype and never cast): activations at the peak by (batch, audio latents).
AUDIO_TRACED = {(1, 9): 7_846_912, (1, 25): 22_674_432, (1, 97): 89_398_272, (1, 250): 231_186_432,
                (1, 1000): 926_226_432, (1, 2425): 2_246_802_432, (2, 97): 178_796_544}
AUDIO_WEIGHTS = 4 * (53_248_402 + 55_592_802)   # the trace's resident weights, 435,364,816: both modules in fp32


@pytest.mark.parametrize("b,a", sorted(AUDIO_TRACED))
def test_audio_decode_activations_are_the_trace(b, a):
    from gpu_garden.memory.estimate import audio_decode
    assert audio_decode.decode_bytes(a, b) == AUDIO_TRACED[(b, a)]


def test_audio_decode_is_a_phase_of_ltx2():
    est = _est("ltx-2")
    bd = est["breakdown"]["audio_decode"]
    # 97 audio latents at 768x512x97 and 25 fps (ltx58); the audio VAE in fp32; the 5 % margin on the activations
    assert (bd["weights"], bd["activations"], bd["allocator_margin"]) == (AUDIO_WEIGHTS, 89_398_272, 4_469_913)
    assert est["phases"]["audio_decode"] == AUDIO_WEIGHTS + 89_398_272 + 4_469_913 + sum(est["fixed"].values())
    assert any("audio VAE and vocoder at ComfyUI's default configuration" in a for a in est["assumptions"])
    # its frame rate sets the length: 97 frames at 1 fps are 2425 latents (ceil(97 / 1 x 25))
    slow = _est("ltx-2", policy={"audio_fps": 1})
    assert slow["breakdown"]["audio_decode"]["activations"] == 2_246_802_432
    assert "audio_decode" not in _est("ltxv")["phases"]


def test_the_checkpoints_audio_vae_is_held_in_fp32():
    import json
    from pathlib import Path
    from gpu_garden.memory.estimate import audio_decode, families
    keys = json.loads((Path(__file__).parent / "data" / "ltx2_audio_vae_vocoder_keys.json").read_text())
    table = {k: (dt, tuple(sh)) for k, (dt, sh) in keys.items()}
    assert audio_decode.weights_bytes(table) == AUDIO_WEIGHTS
    comps = families.split_components(table, "ltx-2-19b-dev.safetensors")
    assert [(c["role"], c["kind"]) for c in comps] == [("other", families.LTX2_AUDIO_KIND)]


def test_with_every_model_resident_the_audio_vae_comes_on_top():
    est = _est("ltx-2", policy={"models": "resident"})
    w = est["weights"]
    assert est["breakdown"]["audio_decode"]["weights"] == w["diffusion_model"] + w["text_encoders"] + w["vae"] + AUDIO_WEIGHTS
