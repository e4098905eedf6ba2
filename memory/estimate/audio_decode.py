"""LTX-2's audio decode as ComfyUI 0.8.0 runs it (comfy_extras/nodes_lt_audio.py LTXVAudioVAEDecode,
comfy/ldm/lightricks/vae/audio_vae.py AudioVAE.decode): after sampling, the audio latent [B, 8, A, 16] goes through the
audio VAE's decoder to a stereo mel spectrogram [B, 2, 4A - 3, 64] (target_shape_from_latents: causal, 4x in time) and
the HiFi-GAN vocoder to the waveform (24 kHz), the whole batch in one call: no batch rule, no tiles, no retry.

- weights: AudioVAE is a plain torch module built in the default dtype and filled by load_state_dict, so ComfyUI holds
  it in fp32 whatever the file's dtype; ensure_model_loaded frees room for it (free_memory(model_size)) and loads it
  whole (ModelPatcher, load_model_gpu), as VAE.decode does the video VAE: a phase of its own.
- activations: CausalAudioAutoencoder + Vocoder at LTX-2's configuration (the classes' defaults; ltx59's key fixture)
  traced on meta with gpu_garden's tracer (fp32; batch 1 at 9, 25, 97, 250, 1000 and 2425 latents, batch 2 at 97):
  exactly AUDIO_DECODE_MEL bytes per mel frame plus AUDIO_DECODE_0, times the batch. The peak is the decoder's first
  full-resolution block (decoder.up.0.block.0.conv1: its 256-channel input and what the block holds beside it, fp32
  over 64 mel bins), above the vocoder's stages. Fit: 1000 and 2425 latents; the other five traces equal it to the
  byte."""
from .families import LTX2_AUDIO_KIND
from .weights import at_dtype_bytes
from ..units import fmt_bytes

AUDIO_DECODE_MEL = 231_680   # bytes per mel frame of one sample at the peak (fp32)
AUDIO_DECODE_0 = 201_472     # bytes per sample beside them
LATENT_DOWNSAMPLE = 4        # audio_vae.py LATENT_DOWNSAMPLE_FACTOR: mel frames per audio latent
FP32 = 4
# CausalAudioAutoencoder() and Vocoder() at their default configs, ComfyUI 0.8.0 (53,248,402 + 55,592,802 values:
# tests/unit/data/ltx2_audio_vae_vocoder_keys.json), in fp32: the weights when no file with audio_vae.* is given
DEFAULT_WEIGHTS = FP32 * (53_248_402 + 55_592_802)


def mel_frames(audio_latents: int) -> int:
    """audio_vae.py target_shape_from_latents: A x 4, less 3 for the causal axis."""
    return max(0, int(audio_latents) * LATENT_DOWNSAMPLE - (LATENT_DOWNSAMPLE - 1))


def decode_bytes(audio_latents: int, batch: int = 1) -> int:
    """Activation bytes at the peak of AudioVAE.decode for `batch` samples of `audio_latents` latents."""
    return int(batch) * (AUDIO_DECODE_MEL * mel_frames(audio_latents) + AUDIO_DECODE_0)


def weights_bytes(table=None) -> int:
    """The audio VAE and vocoder as ComfyUI holds them on the device: every float tensor in fp32."""
    return at_dtype_bytes(table, FP32) if table else DEFAULT_WEIGHTS


def phase_inputs(comps, audio_latents, batch, assumptions):
    """{"weights", "bytes"} of the audio decode phase (None without an audio latent): the weights of the component
    with audio_vae.* (families.LTX2_AUDIO_KIND), else DEFAULT_WEIGHTS, which an assumption line names."""
    if not audio_latents:
        return None
    aud = next((c for c in comps if c.get("kind") == LTX2_AUDIO_KIND), None)
    out = {"weights": weights_bytes(aud["table"] if aud else None), "bytes": decode_bytes(audio_latents, batch)}
    if not aud:
        assumptions.append("no file with the audio VAE given: the audio decode counts LTX-2's audio VAE and vocoder at "
                           f"ComfyUI's default configuration ({fmt_bytes(out['weights'])} in fp32)")
    return out
