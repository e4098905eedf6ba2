"""Pixel upscale models past ESRGAN and Compact (arch64): SPAN, SwinIR, HAT and DAT (arch65's PLKSR, OmniSR, Swin2SR,
DRCT, ATD, RGT, Real-CUGAN and SAFMN: upscale_archs_more.py), read from a file's header the way spandrel 0.4 reads them
(spandrel/architectures/<arch>/__init__.py, each load(); READERS keeps its registry's order).

Each reader returns what pixel_upscale needs: the architecture, its scale, its width ("features") and a "key" of the
numbers that set one tile's activation peak (width, heads, window, the MLP's width, the upsampler, the scale), each read
from a tensor's shape, never from its values (a header has none). The bytes per input pixel of a tile were traced on
spandrel's real classes at the published configurations (benchmarks/pixel_upscale_tile.py ->
benchmarks/results/pixel_upscale_tile.json, which records the key this module reads for each one); a configuration
not traced keeps its weights and the image, and says its tile is not counted."""
import math

from . import upscale_archs_more as more
# seq_len and square_scale are read through this module by pixel_upscale (ESRGAN, Compact)
from .upscale_shapes import has as _has, seq_len, shuffle_scale as _shuffle_scale, square_scale  # noqa: F401

# activation bytes per input pixel of one tile (fp32), traced (pixel_upscale_tile.json: "key" and "bytes_per_pixel" of
# each config, rounded to the byte; tests/unit/test_estimate_arch64.py checks this table against it)
TILE_BYTES_PER_PIXEL = {
    ('DAT', 180, 6, 465, 360, 'pixelshuffle', 4): 12976,  # dat_s_4x
    ('DAT', 180, 6, 945, 360, 'pixelshuffle', 4): 16543,  # dat_2_4x
    ('DAT', 180, 6, 945, 720, 'pixelshuffle', 2): 16543,  # dat_2x
    ('DAT', 180, 6, 945, 720, 'pixelshuffle', 4): 16543,  # dat_4x
    ('DAT', 60, 6, 945, 120, 'pixelshuffledirect', 4): 10303,  # dat_light_4x
    ('HAT', 144, 6, 16, 24, 6, 288, 4): 37626,  # hat_s_4x
    ('HAT', 180, 6, 16, 24, 60, 360, 2): 39858,  # hat_2x
    ('HAT', 180, 6, 16, 24, 60, 360, 4): 39858,  # hat_4x, hat_l_4x
    ('SPAN', 48, 2): 3864,  # span_2x_48nf
    ('SPAN', 48, 4): 3864,  # span_4x_48nf
    ('SwinIR', 180, 6, 8, 360, 'nearest+conv', 4): 10540,  # swinir_m_4x_real
    ('SwinIR', 180, 6, 8, 360, 'pixelshuffle', 2): 10540,  # swinir_m_2x_classical
    ('SwinIR', 180, 6, 8, 360, 'pixelshuffle', 4): 10540,  # swinir_m_4x_classical
    ('SwinIR', 240, 8, 8, 480, 'nearest+conv', 4): 13965,  # swinir_l_4x_real
    ('SwinIR', 60, 6, 8, 120, 'pixelshuffledirect', 4): 5740,  # swinir_s_4x_light
    **more.TILE_BYTES_PER_PIXEL,  # arch65's (upscale_archs_more.py)
}


def span(t):
    """SPAN (SPANArch.load): feature_channels = conv_1.sk's outputs; the scale from upsampler.0's outputs."""
    if not _has(t, "conv_1.sk.weight", "block_1.c1_r.sk.weight", "conv_cat.weight", "upsampler.0.weight"):
        return None
    feat, in_nc = t["conv_1.sk.weight"][1][:2]
    scale = square_scale(t["upsampler.0.weight"][1][0], in_nc)
    if scale is None:
        raise ValueError(f"no scale gives {t['upsampler.0.weight'][1][0]} output channels")
    return {"arch": "SPAN", "scale": scale, "features": feat, "key": ("SPAN", feat, scale)}


B = "layers.0.residual_group"


def hat(t):
    """HAT (HATArch.load): width = conv_first's outputs; the window from relative_position_index_SA (w*w rows), the
    overlapping window from relative_position_index_OCA; heads from the overlap attention's bias table; the channel
    attention block's width; the MLP's width; a pixel-shuffle upsampler."""
    if not _has(t, "relative_position_index_SA", "relative_position_index_OCA", "conv_first.weight",
                f"{B}.blocks.0.conv_block.cab.0.weight", f"{B}.overlap_attn.relative_position_bias_table"):
        return None
    dim = t["conv_first.weight"][1][0]
    window = math.isqrt(t["relative_position_index_SA"][1][0])
    overlap = math.isqrt(t["relative_position_index_OCA"][1][1])
    heads = t[f"{B}.overlap_attn.relative_position_bias_table"][1][1]
    cab, mlp = t[f"{B}.blocks.0.conv_block.cab.0.weight"][1][0], t[f"{B}.blocks.0.mlp.fc1.weight"][1][0]
    scale, _ = _shuffle_scale(t, "upsample")
    return {"arch": "HAT", "scale": scale, "features": dim, "key": ("HAT", dim, heads, window, overlap, cab, mlp, scale),
            "variant": f"window {window} (overlap {overlap}), {heads} heads"}


def swinir(t):
    """SwinIR (SwinIRArch.load): width = conv_first's outputs (conv_first.1 where the input is unshuffled); the window from
    relative_position_index (w*w rows); heads from the bias table; the MLP's width; the upsampler by its keys and its
    scale as spandrel counts it. Swin2SR (continuous position bias, no bias table) is not this."""
    first = "conv_first.1.weight" if "conv_first.1.weight" in t else "conv_first.weight"
    if not _has(t, first, f"{B}.blocks.0.attn.relative_position_index", f"{B}.blocks.0.attn.relative_position_bias_table",
                f"{B}.blocks.0.mlp.fc1.bias"):
        return None
    dim, in_nc = t[first][1][:2]
    unshuffle = math.isqrt(in_nc // 3) if first == "conv_first.1.weight" else 1
    window = math.isqrt(t[f"{B}.blocks.0.attn.relative_position_index"][1][0])
    heads = t[f"{B}.blocks.0.attn.relative_position_bias_table"][1][1]
    mlp = t[f"{B}.blocks.0.mlp.fc1.bias"][1][0]
    if "conv_before_upsample.0.weight" in t:
        up = "nearest+conv" if "conv_up1.weight" in t else "pixelshuffle"
    else:
        up = "pixelshuffledirect" if "upsample.0.weight" in t else ""
    if up == "nearest+conv":
        scale = 2 ** sum(1 for k in t if "conv_up" in k and "bias" not in k)
    elif up == "pixelshuffle":
        scale = _shuffle_scale(t, "upsample")[0]
    elif up == "pixelshuffledirect":
        out_nc = t["conv_last.weight"][1][0] if "conv_last.weight" in t else in_nc
        scale = math.isqrt(t["upsample.0.bias"][1][0] // out_nc)
    else:
        scale = 1
    scale //= unshuffle
    # an unshuffled input runs the body at 1/unshuffle of the side: no traced configuration has one (its key says so)
    key = ("SwinIR", dim, heads, window, mlp, up, scale) + ((("unshuffle", unshuffle),) if unshuffle > 1 else ())
    return {"arch": "SwinIR", "scale": scale, "features": dim, "key": key,
            "variant": f"window {window}, {heads} heads, {up or 'no'} upsampler"}


D = "layers.0.blocks.0"


def dat(t):
    """DAT (DATArch.load): width = conv_first's outputs; heads from block 1's temperature (block 0's pos3 when a layer
    has one block); the split window from attns.0's rpe_biases rows ((2h-1)(2w-1): spandrel reads its values, a header
    has only the shape); the FFN's width; the upsampler by its keys."""
    if not _has(t, "conv_first.weight", "before_RG.1.weight", f"{D}.attn.attns.0.rpe_biases", f"{D}.ffn.fc1.weight"):
        return None
    dim, in_nc = t["conv_first.weight"][1][:2]
    if "layers.0.blocks.1.attn.temperature" in t:
        heads = t["layers.0.blocks.1.attn.temperature"][1][0]
    else:
        heads = t[f"{D}.attn.attns.0.pos.pos3.2.weight"][1][0] * 2
    rpe = t[f"{D}.attn.attns.0.rpe_biases"][1][0]
    ffn = t[f"{D}.ffn.fc1.weight"][1][0]
    if "conv_last.weight" in t:
        up, scale = "pixelshuffle", _shuffle_scale(t, "upsample")[0]
    else:
        up, scale = "pixelshuffledirect", math.isqrt(t["upsample.0.weight"][1][0] // in_nc)
    layers = seq_len(t, "layers")
    return {"arch": "DAT", "scale": scale, "features": dim, "key": ("DAT", dim, heads, rpe, ffn, up, scale),
            "variant": f"{layers} groups, {heads} heads, split window of {rpe} offsets, {up}"}


# in spandrel's registry order (main_registry.py: HAT, Swin2SR, SwinIR, OmniSR, RGT, DAT, SPAN, RealCUGAN, SAFMN, ATD,
# DRCT, then PLKSR after ESRGAN, which pixel_upscale.detect reads before these: no ESRGAN layout has PLKSR's feats.*)
READERS = (hat, more.swin2sr, swinir, more.omnisr, more.rgt, dat, span, more.realcugan, more.safmn, more.atd, more.drct,
           more.plksr)


def detect(table) -> dict | None:
    """The first reader that knows the table, as pixel_upscale.detect's answer (unshuffle False: an ESRGAN idea), or None."""
    for read in READERS:
        got = read(table)
        if got:
            return {"unshuffle": False, **got}
    return None


def per_pixel(arch, side=512) -> int | None:
    """Traced bytes per input pixel of a tile of `side` x `side` pixels (pixel_upscale.tile_side: the square of the
    tile's area); None where not traced. Where the figure is not
    the same at each traced tile (more.SMALL_TILE_BYTES_PER_PIXEL: RGT's grows with the tile's area, Real-CUGAN's shrinks),
    a side between two traced tiles (128, 256, 512) takes the figure linear in the tile's area between theirs (RGT's
    attention matrix is (area) x (area / 256): bytes per pixel c0 + c1 x area; review rev65c #1: the 512 tile's figure
    at a 384 tile was 1.70x the trace), a side under the smallest its figure; else the 512 tile's."""
    key = tuple(arch["key"])
    top = TILE_BYTES_PER_PIXEL.get(key)
    small = more.SMALL_TILE_BYTES_PER_PIXEL.get(key)
    if not small or top is None:
        return top
    pts = sorted({**small, 512: top}.items())
    if side <= pts[0][0]:
        return pts[0][1]
    for (s0, f0), (s1, f1) in zip(pts, pts[1:]):
        if side <= s1:
            return round(f0 + (f1 - f0) * (side * side - s0 * s0) / (s1 * s1 - s0 * s0))
    return top
