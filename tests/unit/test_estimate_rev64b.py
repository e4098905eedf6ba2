"""Review rev64b #2-#4, each reproduced by the reviewer first: two Hunyuan3D decodes (the larger is counted), an upscale
step whose model file is not read (left out, not paired with another model), and the per-sampler ControlNet line (only
for the set counted)."""
from gpu_garden.memory.estimate import layouts, workflow
from test_estimate_ups64 import _api, _models
from test_estimate_fix64b import _hires, _before_after, _added
from test_estimate_wf66 import CNET_BYTES, CNET_RESIDUALS

BIG = 22532 * 16000 + 2176 * 4096 + 8 * 385 ** 3  # 825,957,896 (test_estimate_h3d64's figure by hand)


def _est(tmp_path, first, second):
    layouts.write_sparse("hunyuan3d_hunyuan_3d_v2.1", tmp_path / "checkpoints" / "hunyuan_3d_v2.1.safetensors")
    g = {"nodes": [{"id": 1, "type": "ImageOnlyCheckpointLoader", "widgets_values": ["hunyuan_3d_v2.1.safetensors"]},
                   {"id": 2, "type": "CLIPVisionEncode", "widgets_values": ["center"]},
                   {"id": 3, "type": "Hunyuan3Dv2Conditioning", "widgets_values": []},
                   {"id": 4, "type": "EmptyLatentHunyuan3Dv2", "widgets_values": [4096, 1]},
                   {"id": 5, "type": "KSampler", "widgets_values": [1, "fixed", 30, 5, "euler", "normal", 1]},
                   {"id": 6, "type": "VAEDecodeHunyuan3D", "widgets_values": first},
                   {"id": 7, "type": "VAEDecodeHunyuan3D", "widgets_values": second}], "links": []}
    return workflow.estimate_workflow(g, tmp_path)


def test_the_larger_decode_is_counted_whatever_the_order(tmp_path):
    a = _est(tmp_path, [16000, 384], [8000, 256])["breakdown"]["vae_decode"]["activations"]
    b = _est(tmp_path, [8000, 256], [16000, 384])["breakdown"]["vae_decode"]["activations"]
    assert a == b == BIG


def test_a_bypassed_decode_is_not_counted(tmp_path):
    layouts.write_sparse("hunyuan3d_hunyuan_3d_v2.1", tmp_path / "checkpoints" / "hunyuan_3d_v2.1.safetensors")
    g = {"nodes": [{"id": 1, "type": "ImageOnlyCheckpointLoader", "widgets_values": ["hunyuan_3d_v2.1.safetensors"]},
                   {"id": 4, "type": "EmptyLatentHunyuan3Dv2", "widgets_values": [4096, 1]},
                   {"id": 5, "type": "KSampler", "widgets_values": [1, "fixed", 30, 5, "euler", "normal", 1]},
                   {"id": 6, "type": "VAEDecodeHunyuan3D", "widgets_values": [8000, 256]},
                   {"id": 7, "type": "VAEDecodeHunyuan3D", "mode": 4, "widgets_values": [16000, 384]}], "links": []}
    got = workflow.estimate_workflow(g, tmp_path)["breakdown"]["vae_decode"]["activations"]
    assert got == 324_965_640


def test_unread_model_is_not_replaced_by_another(tmp_path):
    d = _models(tmp_path)
    (d / "upscale_models" / "broken.safetensors").write_bytes(b"not a model at all" * 10)
    wf = _api()
    for k in ("7", "8", "9", "10", "11"):
        del wf[k]
    wf["5"]["inputs"]["model_name"] = "realesr-x2.pth"          # 512 decode -> Compact x2 -> 1024
    wf["7"] = {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "broken.safetensors"}}
    wf["8"] = {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["7", 0], "image": ["6", 0]}}
    wf["9"] = {"class_type": "SaveImage", "inputs": {"images": ["8", 0]}}
    est = workflow.estimate_workflow(wf, d)
    lines = [a for a in est["assumptions"] if "upscale" in a]
    assert not any("realesr-x2.pth" in a and "1024x1024 image" in a for a in lines), lines


def test_note_names_a_set_not_counted(tmp_path):
    wf = _hires("cn_big.safetensors")
    wf["10"]["inputs"]["control_net_name"] = "cn_small.safetensors"
    before, after = _before_after(tmp_path, wf)
    assert _added(before, after) == (CNET_BYTES, CNET_RESIDUALS)          # cn_big's set (second pass) is counted

    lines = [x for x in after["assumptions"] if "smaller than the estimated" in x]
    assert not any("cn_small" in x and "are counted at" in x for x in lines), lines
