"""arch64: the pixel upscale step for SPAN, SwinIR, HAT and DAT files (memory/estimate/upscale_archs.py).

The expected keys below are worked out by hand from each model's published configuration (the authors' option files:
HAT_SRx4, SwinIR-M x4 GAN, DAT x4, 4x-ClearRealityV1's SPAN), not from the code under test; the benchmark records the
key the estimate reads from spandrel's own classes built at those configurations, and the two must be the same key."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import layouts, pixel_upscale, upscale_archs, upscale_archs_more, workflow

REPO = Path(__file__).resolve().parents[2]
RESULTS = json.loads((REPO / "benchmarks" / "results" / "pixel_upscale_tile.json").read_text())["configs"]
G, L = "layers.0.residual_group", "layers.0.blocks"


def hat_x4():
    """HAT_SRx4: width 180, window 16, overlap ratio 0.5 (overlapping window int(16 * 1.5) = 24), 6 heads, compress
    ratio 3 (the channel attention block 180 // 3 = 60 wide), MLP ratio 2 (360), two pixel-shuffle convs 64 -> 256."""
    return {"conv_first.weight": ("F32", [180, 3, 3, 3]), "relative_position_index_SA": ("I64", [256, 256]),
            "relative_position_index_OCA": ("I64", [256, 576]),
            f"{G}.blocks.0.conv_block.cab.0.weight": ("F32", [60, 180, 3, 3]),
            f"{G}.blocks.0.mlp.fc1.weight": ("F32", [360, 180]),
            f"{G}.overlap_attn.relative_position_bias_table": ("F32", [(16 + 24 - 1) ** 2, 6]),
            "upsample.0.weight": ("F32", [256, 64, 3, 3]), "upsample.2.weight": ("F32", [256, 64, 3, 3]),
            "conv_last.weight": ("F32", [3, 64, 3, 3])}


def swinir_m_x4_real():
    """SwinIR-M x4 real-world (GAN): width 180, window 8 (64 x 64 index), 6 heads ((2*8-1)^2 = 225 offsets), MLP 360,
    the nearest+conv upsampler with two conv_up layers (x4)."""
    t = {"conv_first.weight": ("F32", [180, 3, 3, 3]), f"{G}.blocks.0.attn.relative_position_index": ("I64", [64, 64]),
         f"{G}.blocks.0.attn.relative_position_bias_table": ("F32", [225, 6]), f"{G}.blocks.0.mlp.fc1.bias": ("F32", [360]),
         "conv_before_upsample.0.weight": ("F32", [64, 180, 3, 3]), "conv_last.weight": ("F32", [3, 64, 3, 3])}
    for k in ("conv_up1", "conv_up2"):
        t[f"{k}.weight"], t[f"{k}.bias"] = ("F32", [64, 64, 3, 3]), ("F32", [64])
    return t


def dat_x4():
    """DAT x4: width 180, 6 heads (block 1's temperature), split window 8 x 32 ((2*8-1) x (2*32-1) = 945 offsets),
    expansion 4 (720), pixel-shuffle x4."""
    return {"conv_first.weight": ("F32", [180, 3, 3, 3]), "before_RG.1.weight": ("F32", [180]),
            f"{L}.0.attn.attns.0.rpe_biases": ("I64", [945, 2]), f"{L}.1.attn.temperature": ("F32", [6, 1, 1]),
            f"{L}.0.ffn.fc1.weight": ("F32", [720, 180]), "conv_last.weight": ("F32", [3, 64, 3, 3]),
            "upsample.0.weight": ("F32", [256, 64, 3, 3]), "upsample.2.weight": ("F32", [256, 64, 3, 3])}


def span_x4():
    """SPAN x4, 48 features (4x-ClearRealityV1): conv_1's 1x1 skip 3 -> 48, the upsampler's conv 48 -> 3 x 4^2."""
    return {"conv_1.sk.weight": ("F32", [48, 3, 1, 1]), "block_1.c1_r.sk.weight": ("F32", [48, 48, 1, 1]),
            "conv_cat.weight": ("F32", [48, 192, 1, 1]), "upsampler.0.weight": ("F32", [48, 48, 3, 3])}


CASES = [(hat_x4, ("HAT", 180, 6, 16, 24, 60, 360, 4), "hat_4x"),
         (swinir_m_x4_real, ("SwinIR", 180, 6, 8, 360, "nearest+conv", 4), "swinir_m_4x_real"),
         (dat_x4, ("DAT", 180, 6, 945, 720, "pixelshuffle", 4), "dat_4x"),
         (span_x4, ("SPAN", 48, 4), "span_4x_48nf")]


@pytest.mark.parametrize("table, key, config", CASES, ids=[c[2] for c in CASES])
def test_published_configs_read_from_shapes_to_the_traced_key(table, key, config):
    arch = pixel_upscale.detect(table())
    assert arch["arch"] == key[0] and arch["scale"] == 4 and tuple(arch["key"]) == key
    assert tuple(RESULTS[config]["read"]["key"]) == key  # what the benchmark read from spandrel's class
    assert pixel_upscale.per_pixel(arch) == round(RESULTS[config]["bytes_per_pixel"])


def test_the_table_is_the_benchmarks_traced_figures_one_per_key():
    traced = {tuple(c["read"]["key"]): c for c in RESULTS.values() if c["read"] and c["read"].get("key")}
    assert set(upscale_archs.TILE_BYTES_PER_PIXEL) == set(traced)
    for key, c in traced.items():
        assert upscale_archs.TILE_BYTES_PER_PIXEL[key] == round(c["bytes_per_pixel"])  # the 512 tile's, to the byte
        assert c["bytes_per_pixel"] == c["tiles"]["512"]["bytes_per_pixel"]
        assert c["architecture"] == key[0] and c["read"]["scale"] == c["scale"] and c["loaded_dtype"] == "torch.float32"
        if key in upscale_archs_more.SMALL_TILE_BYTES_PER_PIXEL:
            continue  # arch65: Real-CUGAN, RGT, not linear in the tile's area, keep each tile's own (test_estimate_arch65)
        for t in ("256", "128"):  # the retry's smaller tiles are sized with the 512 figure: within 1 % of their own
            assert abs(c["tiles"][t]["bytes_per_pixel"] / c["bytes_per_pixel"] - 1) < 0.01, (key, t)


def test_hat_l_has_hats_key_and_figure_the_peak_is_in_one_group():
    assert RESULTS["hat_l_4x"]["read"]["key"] == RESULTS["hat_4x"]["read"]["key"]
    assert RESULTS["hat_l_4x"]["bytes_per_pixel"] == RESULTS["hat_4x"]["bytes_per_pixel"]
    assert RESULTS["hat_l_4x"]["module_size"] > 1.8 * RESULTS["hat_4x"]["module_size"]


def test_swin2sr_is_not_swinir_and_a_variant_not_traced_counts_no_tile():
    swin2 = swinir_m_x4_real()
    del swin2[f"{G}.blocks.0.attn.relative_position_bias_table"]  # Swin2SR: a continuous position bias MLP instead
    swin2[f"{G}.blocks.0.attn.cpb_mlp.0.weight"] = ("F32", [512, 2])
    assert pixel_upscale.detect(swin2) is None
    wide = hat_x4()
    wide["conv_first.weight"] = ("F32", [96, 3, 3, 3])  # a HAT 96 wide: read, never traced
    arch = pixel_upscale.detect(wide)
    assert arch["arch"] == "HAT" and arch["features"] == 96 and pixel_upscale.per_pixel(arch) is None


def test_a_hat_file_on_a_1024_image_counts_its_512_tile_and_the_smaller_retries(tmp_path):
    d = tmp_path / "models"
    layouts.write_sparse("sdxl_sd_xl_base_1.0", d / "checkpoints" / "sdxl.safetensors")
    layouts.write_sparse({"tensors": {k: {"dtype": dt, "shape": s} for k, (dt, s) in hat_x4().items()}},
                         d / "upscale_models" / "HAT_SRx4.safetensors")
    wf = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
          "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
          "3": {"class_type": "KSampler", "inputs": {"model": ["1", 0], "latent_image": ["2", 0], "cfg": 7.0}},
          "4": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["1", 2]}},
          "5": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": "HAT_SRx4.safetensors"}},
          "6": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["5", 0], "image": ["4", 0]}},
          "7": {"class_type": "SaveImage", "inputs": {"images": ["6", 0]}}}
    est = workflow.estimate_workflow(wf, d)
    per, image = round(RESULTS["hat_4x"]["bytes_per_pixel"]), 1024 * 1024 * 3 * 4
    u = est["policy"]["pixel_upscale"]
    assert u["tile"] == per * 512 * 512 and u["bytes"] == image + per * 512 * 512
    assert u["retry"] == {256: image + per * 256 * 256, 128: image + per * 128 * 128}
    assert any("HAT x4, 180 features, window 16 (overlap 24), 6 heads" in a for a in est["assumptions"])


def test_spandrels_other_readings_an_unshuffled_swinir_and_a_one_block_dat_layer():
    t = swinir_m_x4_real()
    del t["conv_before_upsample.0.weight"]
    t["conv_first.1.weight"] = t.pop("conv_first.weight")[0], [180, 12, 3, 3]  # pixel-unshuffled by 2: 3 x 2^2 inputs
    t["conv_before_upsample.0.weight"] = ("F32", [64, 180, 3, 3])
    for k in ("conv_up1", "conv_up2"):
        del t[f"{k}.weight"], t[f"{k}.bias"]
    t["upsample.0.weight"], t["upsample.2.weight"] = ("F32", [256, 64, 3, 3]), ("F32", [256, 64, 3, 3])  # x4 inside
    arch = pixel_upscale.detect(t)
    assert arch["key"][-3:] == ("pixelshuffle", 2, ("unshuffle", 2)) and arch["scale"] == 2  # x4 over the unshuffle's 2
    assert pixel_upscale.per_pixel(arch) is None  # its body runs at half the side: not the traced 2x SwinIR-M's figure
    d = dat_x4()
    del d[f"{L}.1.attn.temperature"]  # a layer of one block: heads = pos3's last conv's outputs x 2
    d[f"{L}.0.attn.attns.0.pos.pos3.2.weight"] = ("F32", [3, 45])
    assert pixel_upscale.detect(d)["key"][2] == 6
