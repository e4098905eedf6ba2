"""arch65: the pixel upscale step for PLKSR / RealPLKSR, OmniSR, Swin2SR, DRCT, ATD, RGT, Real-CUGAN and SAFMN files
(memory/estimate/upscale_archs_more.py), and host RAM holding every upscale model a graph loads.

Each header below carries the keys spandrel's load() reads, with the shapes of the released model named (worked out by
hand from its published configuration, not from the code under test); the benchmark records the key the estimate reads
from spandrel's own class built at that configuration, and the two must be the same key."""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import pixel_upscale, upscale_archs, upscale_archs_more, workflow
from test_estimate_arch64 import dat_x4, hat_x4
from test_estimate_ups63 import _sparse
from test_estimate_ups64 import _api, _models
from support.upscale_models import RRDB_FP32

REPO = Path(__file__).resolve().parents[2]
RESULTS = json.loads((REPO / "benchmarks" / "results" / "pixel_upscale_tile.json").read_text())["configs"]
F = "F32"
NEW = ("PLKSR", "OmniSR", "Swin2SR", "DRCT", "ATD", "RGT", "RealCUGAN", "SAFMN")


def realplksr_dysample_x4():
    """4xNomos2_realplksr_dysample (traiNNer-redux realplksr): 64 wide, 28 blocks (feats 0, 1-28, a dropout at 29, the
    last conv at 30: 3 x 4^2 = 48 outputs), kernel 17 on 64 x 0.25 = 16 channels, element-wise attention, layer norm,
    DySample (to_img.init_pos)."""
    return {"feats.0.weight": (F, [64, 3, 3, 3]), "feats.1.channel_mixer.0.weight": (F, [128, 64, 3, 3]),
            "feats.1.lk.conv.weight": (F, [16, 16, 17, 17]), "feats.1.attn.f.0.weight": (F, [64, 64, 3, 3]),
            "feats.1.refine.weight": (F, [64, 64, 1, 1]), "feats.1.layer_norm.bias": (F, [64]),
            "feats.28.refine.weight": (F, [64, 64, 1, 1]), "feats.30.weight": (F, [48, 64, 3, 3]),
            "to_img.init_pos": (F, [1, 32, 1, 1]), "to_img.offset.weight": (F, [32, 48, 1, 1])}


def plksr_x4():
    """PLKSR x4 (the paper's): 64 wide, 28 blocks (last conv at feats.29), DCCM (3x3 then 3x3: channe_mixer, the
    typo), kernel 17 on 16 channels, no element-wise attention."""
    return {"feats.0.weight": (F, [64, 3, 3, 3]), "feats.1.channe_mixer.0.weight": (F, [128, 64, 3, 3]),
            "feats.1.channe_mixer.2.weight": (F, [64, 128, 3, 3]), "feats.1.lk.conv.weight": (F, [16, 16, 17, 17]),
            "feats.1.refine.weight": (F, [64, 64, 1, 1]), "feats.29.weight": (F, [48, 64, 3, 3])}


O = "residual_layer.0.residual_layer.0.layer"


def omnisr_x4():
    """OmniSR_X4_DIV2K: 64 wide, 5 groups, window 8 ((2*8-1)^2 = 225 bias rows), up.0: 3 x 4^2 = 48 outputs."""
    return {"input.weight": (F, [64, 3, 3, 3]), f"{O}.0.fn.0.weight": (F, [64, 64, 1, 1]),
            f"{O}.2.fn.rel_pos_bias.weight": (F, [225, 4]), "residual_layer.4.residual_layer.0.layer.0.fn.0.weight":
            (F, [64, 64, 1, 1]), "up.0.weight": (F, [48, 64, 3, 3])}


S = "layers.0.residual_group.blocks.0"


def swin2sr_x4():
    """Swin2SR_ClassicalSR_X4_64: 180 wide, window 8 (64 x 64 index), 6 heads (logit_scale 6 x 1 x 1), MLP 360, the
    pixel-shuffle upsampler's two convs 64 -> 256 (x4)."""
    return {"conv_first.weight": (F, [180, 3, 3, 3]), "patch_embed.proj.weight": (F, [180, 180, 1, 1]),
            f"{S}.norm1.weight": (F, [180]), f"{S}.attn.logit_scale": (F, [6, 1, 1]),
            f"{S}.attn.relative_position_index": ("I64", [64, 64]), f"{S}.attn.cpb_mlp.0.weight": (F, [512, 2]),
            f"{S}.mlp.fc1.weight": (F, [360, 180]), f"{S}.mlp.fc1.bias": (F, [360]),
            "conv_after_body.weight": (F, [180, 180, 3, 3]), "conv_before_upsample.0.weight": (F, [64, 180, 3, 3]),
            "upsample.0.weight": (F, [256, 64, 3, 3]), "upsample.2.weight": (F, [256, 64, 3, 3]),
            "conv_last.weight": (F, [3, 64, 3, 3])}


def drct_x4():
    """DRCT_SRx4_DF2K: 180 wide, window 16 ((2*16-1)^2 = 961 bias rows), 6 heads, MLP 360, growth 32 (adjust1's
    outputs; swin5 sees 180 + 4 x 32 = 308 channels), pixel shuffle x4."""
    R = "layers.0.swin1"
    return {"conv_first.weight": (F, [180, 3, 3, 3]), f"{R}.attn.relative_position_bias_table": (F, [961, 6]),
            f"{R}.mlp.fc1.weight": (F, [360, 180]), "layers.0.adjust1.weight": (F, [32, 180, 1, 1]),
            "layers.0.swin5.norm1.weight": (F, [308]), "norm.weight": (F, [180]),
            "upsample.0.weight": (F, [256, 64, 3, 3]), "upsample.2.weight": (F, [256, 64, 3, 3]),
            "conv_last.weight": (F, [3, 64, 3, 3])}


A = "layers.0.residual_group.layers.0"


def atd_x4():
    """ATD_SRx4: 210 wide, window 16 (256 x 256 index), 6 heads, 128 tokens reduced to 20, conv FFN 420, pixel
    shuffle x4 (conv_before_upsample)."""
    return {"relative_position_index_SA": ("I64", [256, 256]), "conv_first.weight": (F, [210, 3, 3, 3]),
            "layers.0.residual_group.td": (F, [128, 210]), f"{A}.sigma": (F, [1]),
            f"{A}.attn_win.relative_position_bias_table": (F, [961, 6]), f"{A}.attn_atd.scale": (F, [128]),
            f"{A}.attn_atd.wq.weight": (F, [20, 210]), f"{A}.convffn.fc1.weight": (F, [420, 210]),
            "norm.weight": (F, [210]), "conv_before_upsample.0.weight": (F, [64, 210, 3, 3]),
            "upsample.0.weight": (F, [256, 64, 3, 3]), "upsample.2.weight": (F, [256, 64, 3, 3]),
            "conv_last.weight": (F, [3, 64, 3, 3])}


G = "layers.0.blocks.0"


def rgt_x4():
    """RGT_x4: 180 wide, 6 heads (pos3's last conv: 3 = half), split 8 x 32 (256 index rows, 15 x 63 = 945 bias
    rows), MLP 360, c_ratio 0.5 (block 1's conv 180 -> 90), pixel shuffle x4."""
    return {"conv_first.weight": (F, [180, 3, 3, 3]), "before_RG.1.weight": (F, [180]), f"{G}.gamma": (F, [180]),
            f"{G}.attn.attns.0.rpe_biases": (F, [945, 2]), f"{G}.attn.attns.0.relative_position_index": ("I64", [256]),
            f"{G}.attn.attns.0.pos.pos3.2.weight": (F, [3, 45]), f"{G}.mlp.fc1.weight": (F, [360, 180]),
            "layers.0.blocks.1.attn.conv.weight": (F, [90, 180, 1, 1]),
            "conv_before_upsample.0.weight": (F, [64, 180, 3, 3]), "upsample.0.weight": (F, [256, 64, 3, 3]),
            "upsample.2.weight": (F, [256, 64, 3, 3]), "conv_last.weight": (F, [3, 64, 3, 3])}


def realcugan_x2(pro=False):
    """up2x-latest-conservative.pth (UpCunet2x): unet1's deconvolution 4 wide (UpCunet3x's is 5), no conv_final;
    pro-conservative-up2x.pth has a "pro" entry."""
    t = {"unet1.conv1.conv.0.weight": (F, [32, 3, 3, 3]), "unet1.conv1_down.weight": (F, [64, 64, 2, 2]),
         "unet1.conv_bottom.weight": (F, [64, 64, 4, 4]), "unet2.conv1.conv.0.weight": (F, [32, 3, 3, 3]),
         "unet2.conv_bottom.weight": (F, [3, 64, 3, 3]), "unet2.conv5.weight": (F, [64, 64, 3, 3]),
         "unet2.conv4_up.weight": (F, [64, 64, 2, 2])}
    return {**t, "pro": (F, [1])} if pro else t


def safmn_x4():
    """SAFMN_DF2K_x4: 36 wide, 8 blocks, FFN x2 (72), to_img.0: 3 x 4^2 = 48 outputs."""
    return {"to_feat.weight": (F, [36, 3, 3, 3]), "feats.0.norm1.weight": (F, [36]),
            "feats.0.safm.mfr.0.weight": (F, [9, 1, 3, 3]), "feats.0.safm.mfr.3.weight": (F, [9, 1, 3, 3]),
            "feats.0.safm.aggr.weight": (F, [36, 36, 1, 1]), "feats.0.ccm.ccm.0.weight": (F, [72, 36, 3, 3]),
            "feats.0.ccm.ccm.2.weight": (F, [36, 72, 1, 1]), "feats.7.norm1.weight": (F, [36]),
            "to_img.0.weight": (F, [48, 36, 3, 3])}


CASES = [(realplksr_dysample_x4, ("PLKSR", "RealPLKSR", 64, 16, True, "layer_norm", "dysample", 4), "realplksr_dysample_4x"),
         (plksr_x4, ("PLKSR", "PLKSR", 64, 16, "DCCM", "PLK", False, 4), "plksr_4x"),
         (omnisr_x4, ("OmniSR", 64, 8, True, 4), "omnisr_4x"),
         (swin2sr_x4, ("Swin2SR", 180, 6, 8, 360, "pixelshuffle", 4), "swin2sr_4x_classical"),
         (drct_x4, ("DRCT", 180, 6, 16, 360, 32, "pixelshuffle", 4), "drct_4x"),
         (atd_x4, ("ATD", 210, 6, 16, 128, 20, 420, 256, "pixelshuffle", 4), "atd_4x"),
         (rgt_x4, ("RGT", 180, 6, 8, 32, 360, 90, 4), "rgt_4x"),
         (realcugan_x2, ("RealCUGAN", "UpCunet2x", False, 2), "realcugan_2x"),
         (lambda: realcugan_x2(pro=True), ("RealCUGAN", "UpCunet2x", True, 2), "realcugan_2x_pro"),
         (safmn_x4, ("SAFMN", 36, 72, 4), "safmn_4x")]


@pytest.mark.parametrize("table, key, config", CASES, ids=[c[2] for c in CASES])
def test_released_layouts_read_from_shapes_to_the_traced_key_and_figure(table, key, config):
    arch = pixel_upscale.detect(table())
    assert arch["arch"] == key[0] and arch["scale"] == key[-1] and tuple(arch["key"]) == key
    assert tuple(RESULTS[config]["read"]["key"]) == key  # what the benchmark read from spandrel's class
    assert RESULTS[config]["architecture"] == key[0] and RESULTS[config]["scale"] == key[-1]
    assert pixel_upscale.per_pixel(arch) == round(RESULTS[config]["bytes_per_pixel"]) > 0


def _variant(build, key, shape):
    t = build()
    t[key] = (t[key][0], shape)
    return t


UNTRACED = [  # one number no traced configuration has: read, never traced
    ("realplksr 48 wide", lambda: _variant(realplksr_dysample_x4, "feats.0.weight", [48, 3, 3, 3]), "PLKSR"),
    ("plksr ICCM", lambda: _variant(plksr_x4, "feats.1.channe_mixer.0.weight", [128, 64, 1, 1]), "PLKSR"),
    ("omnisr window 16", lambda: _variant(omnisr_x4, f"{O}.2.fn.rel_pos_bias.weight", [961, 4]), "OmniSR"),
    ("swin2sr 8 heads", lambda: _variant(swin2sr_x4, f"{S}.attn.logit_scale", [8, 1, 1]), "Swin2SR"),
    ("drct growth 64", lambda: _variant(drct_x4, "layers.0.adjust1.weight", [64, 180, 1, 1]), "DRCT"),
    ("atd 256 tokens", lambda: _variant(atd_x4, f"{A}.attn_atd.scale", [256]), "ATD"),
    ("rgt split 8x8", lambda: _variant(lambda: _variant(rgt_x4, f"{G}.attn.attns.0.relative_position_index", [64]),
                                       f"{G}.attn.attns.0.rpe_biases", [225, 2]), "RGT"),
    ("realcugan 2x fast", lambda: {**_variant(realcugan_x2, "unet1.conv1.conv.0.weight", [32, 12, 3, 3]),
                                   "conv_final.weight": (F, [12, 64, 3, 3])}, "RealCUGAN"),  # UpCunet2x_fast
    ("safmn 64 wide", lambda: _variant(safmn_x4, "to_feat.weight", [64, 3, 3, 3]), "SAFMN"),
]


@pytest.mark.parametrize("build, arch", [u[1:] for u in UNTRACED], ids=[u[0] for u in UNTRACED])
def test_a_variant_not_traced_is_read_and_counts_no_tile(build, arch):
    got = pixel_upscale.detect(build())
    assert got["arch"] == arch and pixel_upscale.per_pixel(got) is None


def test_realcugan_classes_by_spandrels_keys():
    x3 = _variant(realcugan_x2, "unet1.conv_bottom.weight", [64, 64, 5, 5])  # UpCunet3x's deconvolution
    assert pixel_upscale.detect(x3)["key"] == ("RealCUGAN", "UpCunet3x", False, 3)
    x4 = {**realcugan_x2(), "conv_final.weight": (F, [12, 64, 3, 3])}  # 3 outputs x 4, 3 inputs: UpCunet4x
    assert pixel_upscale.detect(x4)["key"] == ("RealCUGAN", "UpCunet4x", False, 4)
    assert tuple(RESULTS["realcugan_3x"]["read"]["key"]) == ("RealCUGAN", "UpCunet3x", False, 3)
    assert tuple(RESULTS["realcugan_4x"]["read"]["key"]) == ("RealCUGAN", "UpCunet4x", False, 4)


def test_no_reader_takes_anothers_layout():
    """spandrel's registry order kept, and each reader's keys its own: HAT's and ATD's both have
    relative_position_index_SA; DAT's and RGT's both have before_RG and rpe_biases; Swin2SR's and SwinIR's both
    have layers.0.residual_group.blocks.0."""
    for build, arch in ((hat_x4, "HAT"), (atd_x4, "ATD"), (dat_x4, "DAT"), (rgt_x4, "RGT"), (swin2sr_x4, "Swin2SR")):
        t = build()
        assert [r.__name__ for r in upscale_archs.READERS if r(t)] == [arch.lower()]


def test_the_table_is_the_benchmarks_traced_figures_one_per_key():
    traced = {tuple(c["read"]["key"]): c for c in RESULTS.values() if c["read"] and c["read"]["arch"] in NEW}
    assert set(upscale_archs_more.TILE_BYTES_PER_PIXEL) == set(traced) and {k[0] for k in traced} == set(NEW)
    small = {}
    for key, c in traced.items():
        assert upscale_archs_more.TILE_BYTES_PER_PIXEL[key] == upscale_archs.TILE_BYTES_PER_PIXEL[key] \
            == round(c["bytes_per_pixel"]) == round(c["tiles"]["512"]["bytes_per_pixel"])
        assert c["architecture"] == key[0] and c["read"]["scale"] == c["scale"] and c["loaded_dtype"] == "torch.float32"
        if any(abs(c["tiles"][t]["bytes_per_pixel"] / c["bytes_per_pixel"] - 1) >= 0.01 for t in ("256", "128")):
            small[key] = {int(t): round(c["tiles"][t]["bytes_per_pixel"]) for t in ("256", "128")}
    assert upscale_archs_more.SMALL_TILE_BYTES_PER_PIXEL == small
    assert {k[0] for k in small} == {"RealCUGAN", "RGT"}


def test_the_peak_is_in_one_group_drct_l_and_rgt_s_share_their_keys_figure():
    for big, base in (("drct_l_4x", "drct_4x"), ("rgt_4x", "rgt_s_4x")):
        assert RESULTS[big]["read"]["key"] == RESULTS[base]["read"]["key"]
        assert RESULTS[big]["tiles"] == RESULTS[base]["tiles"] or RESULTS[big]["bytes_per_pixel"] == RESULTS[base][
            "bytes_per_pixel"]
        assert RESULTS[big]["module_size"] > 1.25 * RESULTS[base]["module_size"]


@pytest.mark.parametrize("config, table", [("rgt_4x", rgt_x4), ("realcugan_2x", realcugan_x2)])
def test_rgt_and_realcugan_retries_use_their_own_smaller_tiles_figures(config, table):
    """RGT's attention matrix grows with the tile's area (its figure at 512 is about 3x its 256 one); Real-CUGAN pads
    each tile (its figure grows as the tile shrinks): a retry at 256 or 128 is sized with that tile's traced figure."""
    arch = pixel_upscale.detect(table())
    tiles = RESULTS[config]["tiles"]
    image = 2048 * 2048 * 3 * 4
    got = pixel_upscale.phase_inputs({"name": "m", "weights": 1, "arch": arch}, (2048, 2048, 1), "typed", [])
    assert got["tile"] == round(tiles["512"]["bytes_per_pixel"]) * 512 * 512
    assert got["retry"] == {t: image + round(tiles[str(t)]["bytes_per_pixel"]) * t * t for t in (256, 128)}
    small = pixel_upscale.phase_inputs({"name": "m", "weights": 1, "arch": arch}, (200, 240, 1), "typed", [])
    # a 200x240 tile: between the 128 and 256 tiles' figures, linear in the tile's area (reviews rev65c #1, rev65d #3)
    f128, f256 = round(tiles["128"]["bytes_per_pixel"]), round(tiles["256"]["bytes_per_pixel"])
    assert small["tile"] == round(f128 + (f256 - f128) * (200 * 240 - 128 ** 2) / (256 ** 2 - 128 ** 2)) * 200 * 240


def _two_upscales(tmp_path, second):
    """ups64's hires graph (4x-UltraSharp on the first decode) plus a second UpscaleModelLoader -> ImageUpscaleWithModel
    on the same decode, saved: both loaders' outputs stay in ComfyUI's cache."""
    d = _models(tmp_path)
    _sparse(safmn_x4(), d / "upscale_models" / "4x-SAFMN.safetensors")
    wf = _api()
    wf["90"] = {"class_type": "UpscaleModelLoader", "inputs": {"model_name": second}}
    wf["91"] = {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["90", 0], "image": ["4", 0]}}
    wf["92"] = {"class_type": "SaveImage", "inputs": {"images": ["91", 0]}}
    return wf, d


def test_host_ram_holds_every_distinct_upscale_model_the_graph_loads(tmp_path):
    """Fails on the old code (host_ram counted pol["pixel_upscale"]["weights"], the counted step's model only)."""
    pol = {"host_ram": 64 << 30}
    wf, d = _two_upscales(tmp_path, "4x-SAFMN.safetensors")
    one = workflow.estimate_workflow(_api(), d, policy=pol)
    two = workflow.estimate_workflow(wf, d, policy=pol)
    safmn = 4 * (36 * 27 + 36 + 9 * 9 * 2 + 36 * 36 + 72 * 36 * 9 + 36 * 72 + 36 + 48 * 36 * 9)  # the header's values
    assert two["policy"]["pixel_upscale"]["held"] == {"4x-UltraSharp.safetensors": RRDB_FP32, "4x-SAFMN.safetensors": safmn}
    assert two["host_ram"]["kept_for_reload"] - one["host_ram"]["kept_for_reload"] == safmn
    assert any(a.startswith("2 upscale models loaded (4x-UltraSharp.safetensors, 4x-SAFMN.safetensors)")
               for a in two["assumptions"])


def test_two_loaders_of_one_file_hold_it_once(tmp_path):
    pol = {"host_ram": 64 << 30}
    wf, d = _two_upscales(tmp_path, "4x-UltraSharp.safetensors")
    one = workflow.estimate_workflow(_api(), d, policy=pol)
    two = workflow.estimate_workflow(wf, d, policy=pol)
    assert two["policy"]["pixel_upscale"]["held"] == {"4x-UltraSharp.safetensors": RRDB_FP32}
    assert two["host_ram"]["kept_for_reload"] == one["host_ram"]["kept_for_reload"]
