"""ltx63 on ComfyUI 0.8.0's own classes (COMFYUI_PYTHON, COMFYUI_DIR): LTX-2's video VAE as comfy/sd.py builds it
from the checkpoint's "config" metadata, traced on meta. Expected figures: the trace read once (docs/estimate-accuracy.md
"Task ltx63"); the weights are hand arithmetic (diffusers' AutoencoderKLLTX2Video at Lightricks/LTX-2's vae/config.json:
1,222,479,601 parameters, plus VideoVAE's 640 statistics values, 2 bytes each). Fails on the old code: the family's
VAE was LTX-Video 0.9's (838,388,578 bytes), and comfy.sd.VAE was built without the metadata (version 2's guessed
config, with timestep conditioning)."""
import pytest

from support.comfy_host import host_unavailable_reason
from support.pack import host_json

pytestmark = [pytest.mark.host, pytest.mark.skipif(bool(host_unavailable_reason()), reason=host_unavailable_reason() or "")]


def test_ltx2_video_vae_built_and_traced_as_comfyui_loads_it():
    code = ("import json; from gpu_garden.memory.trace import comfy_checkout as cc, tracer\n"
            "from gpu_garden.memory.estimate import layouts\n"
            "same = cc.vae_class_layout(sys.argv[1], 'ltx-2')['tensors'] == layouts.load('vae_ltx-2_video_vae')['tensors']\n"
            "r = tracer.trace_family(sys.argv[1], 'ltx-2', 768, 512, frames=97, phase='decode')\n"
            "case = cc.build_case(sys.argv[1], 'ltx-2', 320, 192, 9, phase='decode')\n"
            "tsc = case['owner'].timestep_conditioning\n"
            "print(json.dumps([same, r['activations_peak'], r['weights'], r['model']['latent'], tsc]))")
    same, acts, weights, latent, tsc = host_json(code)
    assert same
    assert weights == 2 * (1_222_479_601 + 640)
    assert latent == [1, 128, 13, 16, 24]
    assert acts == 3_718_253_568
    assert tsc is False


def test_ltx2_audio_decode_traced_on_comfyuis_audio_vae():
    """AudioVAE (audio_vae.py) at LTX-2's configuration (CausalAudioAutoencoder's and Vocoder's defaults), built on meta
    as LTXVAudioVAELoader builds it, its decode traced as AudioVAE.decode runs it less the patcher's load (denormalize,
    the decoder to the mel target shape, the vocoder); fp32, as the module is never cast. torchaudio (only encode's mel
    transform uses it) is stubbed when ComfyUI's venv lacks it."""
    code = ("import json, types, torch\n"
            "from gpu_garden.memory.trace import comfy_checkout as cc, tracer\n"
            "from gpu_garden.memory.estimate import audio_decode\n"
            "cc.import_comfy(sys.argv[1])\n"
            "sys.modules.setdefault('torchaudio', types.ModuleType('torchaudio'))\n"
            "from comfy.ldm.lightricks.vae.causal_audio_autoencoder import CausalAudioAutoencoder\n"
            "from comfy.ldm.lightricks.vocoders.vocoder import Vocoder\n"
            "import comfy.ldm.lightricks.vae.audio_vae as AV\n"
            "AV.ModelDeviceManager = lambda m: None\n"
            "cfg = {'audio_vae': CausalAudioAutoencoder._guess_config(None), 'vocoder': Vocoder.get_default_config(None)}\n"
            "with torch.device('meta'):\n"
            "    sd = {'audio_vae.' + k: v for k, v in CausalAudioAutoencoder().state_dict().items()}\n"
            "    sd.update({'vocoder.' + k: v for k, v in Vocoder().state_dict().items()})\n"
            "    vae = AV.AudioVAE(sd, {'config': json.dumps(cfg)})\n"
            "def dec(x):\n"
            "    mel = vae.autoencoder.decode(vae.normalizer.denormalize(x), target_shape=vae.target_shape_from_latents(x.shape))\n"
            "    return vae.run_vocoder(mel)\n"
            "out = []\n"
            "for b, a in ((1, 97), (1, 1000), (2, 97)):\n"
            "    r = tracer.trace(vae, torch.empty((b, 8, a, 16), dtype=torch.float32, device='meta'), call=dec)\n"
            "    out.append([r['activations_peak'], r['weights'], audio_decode.decode_bytes(a, b)])\n"
            "print(json.dumps([out, vae.output_sample_rate, str(next(vae.parameters()).dtype)]))")
    out, rate, dtype = host_json(code)
    assert out == [[89_398_272, 435_364_816, 89_398_272], [926_226_432, 435_364_816, 926_226_432],
                   [178_796_544, 435_364_816, 178_796_544]]
    assert (rate, dtype) == (24000, "torch.float32")
