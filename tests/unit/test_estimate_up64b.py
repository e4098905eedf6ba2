"""Review rev64's findings #1, #2, #4 and #6 on the pixel upscale step (each reproduced by the reviewer first):
each ImageUpscaleWithModel is sized with its own model on its own image and the step that needs the most is counted;
a typed --batch keeps the graph's decoded size; SPAN's line names its width once."""
from gpu_garden.memory.estimate import pixel_upscale, workflow
from test_estimate_arch64 import G, span_x4
from test_estimate_ups63 import _sparse
from test_estimate_ups64 import IMAGE, _api, _models

ESRGAN_X4, COMPACT, HAT_S = 8_204, 524, 37_626  # traced bytes a tile pixel (benchmarks/results/pixel_upscale_tile.json)


def hat_s_x4():
    """HAT-S x4 (4xNomos8kSCHAT-S): width 144, window 16 / overlap 24, 6 heads, compress 24 (144 // 24 = 6), MLP 288."""
    return {"conv_first.weight": ("F32", [144, 3, 3, 3]), "relative_position_index_SA": ("I64", [256, 256]),
            "relative_position_index_OCA": ("I64", [256, 576]),
            f"{G}.blocks.0.conv_block.cab.0.weight": ("F32", [6, 144, 3, 3]),
            f"{G}.blocks.0.mlp.fc1.weight": ("F32", [288, 144]),
            f"{G}.overlap_attn.relative_position_bias_table": ("F32", [39 ** 2, 6]),
            "upsample.0.weight": ("F32", [256, 64, 3, 3]), "upsample.2.weight": ("F32", [256, 64, 3, 3]),
            "conv_last.weight": ("F32", [3, 64, 3, 3])}


def _ab():
    """An A/B of two upscale models on one 1024 x 1024 decode: the ESRGAN file is the heavier, HAT-S's tile the larger."""
    return {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
            "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
            "3": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": ["2", 0], "cfg": 7.0}},
            "4": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["1", 2]}},
            "5": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "4x-UltraSharp.safetensors"}},
            "6": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": ["4", 0]}},
            "7": {"class_type": "SaveImage", "inputs": {"images": ["6", 0]}},
            "8": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "4xNomos8kSCHAT-S.safetensors"}},
            "9": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["8", 0], "image": ["4", 0]}},
            "10": {"class_type": "SaveImage", "inputs": {"images": ["9", 0]}}}


def test_two_models_the_step_that_needs_the_most_is_counted_not_the_heaviest_file(tmp_path):
    d = _models(tmp_path)
    _sparse(hat_s_x4(), d / "upscale_models" / "4xNomos8kSCHAT-S.safetensors")
    est = workflow.estimate_workflow(_ab(), d)
    assert est["breakdown"]["pixel_upscale"]["activations"] == 1024 * 1024 * IMAGE + HAT_S * 512 * 512
    assert any("2 pixel upscale steps: the one that needs the most, 4xNomos8kSCHAT-S.safetensors on a 1024x1024 image"
               in a for a in est["assumptions"])


def _chain():
    """512 decode -> 4x-UltraSharp (x4) -> realesr-x2 (Compact x2) on the 2048 x 2048 result."""
    wf = _api()
    for k in ("7", "8", "9", "10", "11"):
        del wf[k]
    wf["7"] = {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "realesr-x2.pth"}}
    wf["8"] = {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["7", 0], "image": ["6", 0]}}
    wf["9"] = {"class_type": "SaveImage", "inputs": {"images": ["8", 0]}}
    return wf


def test_an_upscale_chain_pairs_each_model_with_its_own_image(tmp_path):
    est = workflow.estimate_workflow(_chain(), _models(tmp_path))
    esrgan = 512 * 512 * IMAGE + ESRGAN_X4 * 512 * 512  # 4x-UltraSharp on the 512 decode
    compact = 2048 * 2048 * IMAGE + COMPACT * 512 * 512  # the Compact x2 on ESRGAN's 2048 output
    assert esrgan > compact and est["breakdown"]["pixel_upscale"]["activations"] == esrgan
    line = [a for a in est["assumptions"] if a.startswith("pixel upscale")][0]
    assert "on a 512x512 image" in line and "to 2048x2048" in line and "8192" not in line


def test_a_typed_batch_keeps_the_graphs_decoded_size_and_sets_its_batch(tmp_path):
    d = _models(tmp_path)
    base = workflow.estimate_workflow(_api(), d)["breakdown"]["pixel_upscale"]["activations"]
    assert base == 512 * 512 * IMAGE + ESRGAN_X4 * 512 * 512  # the first pass's decode, not the second pass's 1024
    assert workflow.estimate_workflow(_api(), d, batch=1)["breakdown"]["pixel_upscale"]["activations"] == base
    two = workflow.estimate_workflow(_api(), d, batch=2)["breakdown"]["pixel_upscale"]["activations"]
    assert two == 2 * 512 * 512 * IMAGE + ESRGAN_X4 * 512 * 512  # two images on the device, one tile at a time


def test_spans_line_names_its_width_once():
    notes = []
    pixel_upscale.phase_inputs({"name": "4x-ClearRealityV1.safetensors", "weights": 8_946_912,
                                "arch": pixel_upscale.detect(span_x4()), "why": None}, (512, 512, 1), "x", notes)
    assert "(SPAN x4, 48 features; " in notes[0] and notes[0].count("48 features") == 1
