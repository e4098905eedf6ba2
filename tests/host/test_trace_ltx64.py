"""ltx64 on ComfyUI 0.8.0's own class (COMFYUI_PYTHON, COMFYUI_DIR): LTX-2's latent upsampler built as
LatentUpscaleModelLoader builds it (LatentUpsampler.from_config(json.loads(metadata["config"])), cast to the VAE's dtype),
and LTXVLatentUpsampler's device work traced on meta: the latent cast to the model's dtype, un_normalize with the VAE's
statistics (kept on the CPU: the VAE sits at its offload device), the upsampler's forward. The latent is handed over in a
box the call empties, so its device copy dies when un_normalize replaces it, as the node's reassignment frees it.
Expected: the bundled layout's keys and shapes, 2 or 4 bytes a value, and the activations estimate/latent_upscale.py
states (hand arithmetic in tests/unit/test_estimate_ltx64.py), at several shapes and both dtypes."""
import pytest

from support.comfy_host import host_unavailable_reason
from support.pack import host_json

pytestmark = [pytest.mark.host, pytest.mark.skipif(bool(host_unavailable_reason()), reason=host_unavailable_reason() or "")]


def test_ltx2_latent_upsampler_built_and_traced_as_comfyui_runs_it():
    code = ("import json, torch\n"
            "from gpu_garden.memory.trace import comfy_checkout as cc, tracer\n"
            "from gpu_garden.memory.estimate import latent_upscale, layouts\n"
            "cc.import_comfy(sys.argv[1])\n"
            "from comfy.ldm.lightricks.latent_upsampler import LatentUpsampler\n"
            "from comfy.ldm.lightricks.vae.causal_video_autoencoder import processor\n"
            "lay = layouts.load('upscale_ltx-2-spatial-upscaler-x2-1.0')\n"
            "stats = processor().to(torch.bfloat16)\n"
            "class Box: pass\n"
            "out = []\n"
            "for dt, nb in ((torch.bfloat16, 2), (torch.float32, 4)):\n"
            "    with torch.device('meta'):\n"
            "        m = LatentUpsampler.from_config(json.loads(lay['__metadata__']['config'])).to(dtype=dt)\n"
            "    same = {k: list(v.shape) for k, v in m.state_dict().items()} == "
            "{k: v['shape'] for k, v in lay['tensors'].items()}\n"
            "    def up(box):\n"
            "        x = box.x; del box.x\n"
            "        x = stats.un_normalize(x)\n"
            "        return m(x)\n"
            "    for shape in ([1, 128, 13, 16, 24], [2, 128, 13, 16, 24], [1, 128, 1, 16, 24], [1, 128, 7, 15, 23], "
            "[3, 128, 5, 9, 11]):\n"
            "        box = Box(); box.x = torch.empty(shape, dtype=dt, device='meta')\n"
            "        r = tracer.trace(m, box, call=up)\n"
            "        out.append([same, r['weights'], r['activations_peak'], latent_upscale.activation_bytes(shape, nb), "
            "r['at']['module']])\n"
            "print(json.dumps(out))")
    out = host_json(code)
    assert len(out) == 10
    for i, (same, weights, acts, ours, at) in enumerate(out):
        assert same
        assert weights == (2 if i < 5 else 4) * 497_867_929
        assert acts == ours, (i, acts, ours)
        assert at == "post_upsample_res_blocks.0.activation"
    assert [o[2] for o in out[:2]] == [164_855_808, 329_711_616]
