"""More pixel upscale architectures (arch65): PLKSR and RealPLKSR, OmniSR, Swin2SR, DRCT, ATD, RGT, Real-CUGAN and
SAFMN, read from a file's header the way spandrel 0.4.2 reads them (spandrel/architectures/<arch>/__init__.py, each
load()), as upscale_archs.py does for SPAN, SwinIR, HAT and DAT; upscale_archs.READERS tries these in spandrel's
registry order (main_registry.py: HAT, Swin2SR, SwinIR, OmniSR, RGT, DAT, SPAN, RealCUGAN, SAFMN, ATD, DRCT, ESRGAN,
PLKSR).

Each key holds the numbers that set one tile's activation peak, read from tensor shapes; the number of blocks or groups
is left out (the peak is in one block, or in the upsampler: benchmarks/results/pixel_upscale_tile.json, "at"; DRCT-L
and RGT's 8 groups trace to DRCT's and RGT-S's figures), and a kernel size too (a same-padded convolution's output
does not depend on it: PLKSR-tiny's kernel 13 traces to PLKSR's 17 figure). TILE_BYTES_PER_PIXEL is the traced figure of
each key (benchmarks/pixel_upscale_tile.py; tests/unit/test_estimate_arch65.py checks it against the results file)."""
import math

from .upscale_shapes import has, seq_len, shuffle_scale, square_scale

# activation bytes per input pixel of one tile (fp32), traced: pixel_upscale_tile.json ("key" and "bytes_per_pixel" of
# each config, rounded to the byte); upscale_archs.TILE_BYTES_PER_PIXEL holds these with arch64's
TILE_BYTES_PER_PIXEL = {
    ('ATD', 210, 6, 16, 128, 20, 420, 256, 'pixelshuffle', 4): 27282,  # atd_4x
    ('ATD', 48, 4, 16, 64, 8, 48, 128, 'pixelshuffledirect', 4): 12560,  # atd_light_4x
    ('DRCT', 180, 6, 16, 360, 32, 'pixelshuffle', 4): 23986,  # drct_4x, drct_l_4x
    ('OmniSR', 64, 8, True, 2): 4620,  # omnisr_2x
    ('OmniSR', 64, 8, True, 4): 4620,  # omnisr_4x
    ('PLKSR', 'PLKSR', 64, 16, 'CCM', 'PLK', False, 4): 1292,  # plksr_tiny_4x
    ('PLKSR', 'PLKSR', 64, 16, 'DCCM', 'PLK', False, 4): 1292,  # plksr_4x
    ('PLKSR', 'RealPLKSR', 64, 16, True, 'layer_norm', 'dysample', 2): 1548,  # realplksr_dysample_2x
    ('PLKSR', 'RealPLKSR', 64, 16, True, 'layer_norm', 'dysample', 4): 4492,  # realplksr_dysample_4x
    ('PLKSR', 'RealPLKSR', 64, 16, True, 'layer_norm', 'pixelshuffle', 4): 1548,  # realplksr_4x
    ('RGT', 180, 6, 8, 32, 360, 90, 4): 52410,  # rgt_4x, rgt_s_4x
    ('RealCUGAN', 'UpCunet2x', False, 2): 5236,  # realcugan_2x
    ('RealCUGAN', 'UpCunet2x', True, 2): 5236,  # realcugan_2x_pro
    ('RealCUGAN', 'UpCunet3x', False, 3): 11724,  # realcugan_3x
    ('RealCUGAN', 'UpCunet4x', False, 4): 6338,  # realcugan_4x
    ('SAFMN', 128, 256, 4): 4108,  # safmn_l_4x
    ('SAFMN', 36, 72, 4): 1164,  # safmn_4x
    ('Swin2SR', 180, 6, 8, 360, 'nearest+conv', 4): 10444,  # swin2sr_4x_real
    ('Swin2SR', 180, 6, 8, 360, 'pixelshuffle', 2): 10444,  # swin2sr_2x_classical
    ('Swin2SR', 180, 6, 8, 360, 'pixelshuffle', 4): 10444,  # swin2sr_4x_classical
    ('Swin2SR', 60, 6, 8, 120, 'pixelshuffledirect', 2): 5260,  # swin2sr_2x_light
}
# the smaller tiles' own figures where they are more than 1 % off the 512 tile's: Real-CUGAN pads each tile (its figure
# grows as the tile shrinks), RGT's recursive-generalization attention holds a (tile area) x (tile area / 256) matrix
# per head (rgt.py RG_SA.forward: q @ k.T; its figure grows with the tile). upscale_archs.per_pixel picks by tile side.
SMALL_TILE_BYTES_PER_PIXEL = {
    ('RGT', 180, 6, 8, 32, 360, 90, 4): {256: 16552, 128: 16589},  # rgt_4x, rgt_s_4x
    ('RealCUGAN', 'UpCunet2x', False, 2): {256: 5293, 128: 5407},  # realcugan_2x
    ('RealCUGAN', 'UpCunet2x', True, 2): {256: 5293, 128: 5407},  # realcugan_2x_pro
    ('RealCUGAN', 'UpCunet3x', False, 3): {256: 11808, 128: 11979},  # realcugan_3x
    ('RealCUGAN', 'UpCunet4x', False, 4): {256: 6525, 128: 6914},  # realcugan_4x
}

_MIXERS = {(3, 1): "CCM", (3, 3): "DCCM", (1, 3): "ICCM"}  # PLKSRArch.load: channe_mixer.0 / .2 kernel sizes


def plksr(t):
    """PLKSR and RealPLKSR (PLKSRArch.load): width = feats.0's outputs; the scale from the last feats conv (3 x s**2
    outputs); the large kernel's channels (split_ratio x width) from lk's conv; element-wise attention where
    feats.1.attn.f.0 is. PLKSR (the typo channe_mixer): its channel mixer by its kernels, the large kernel's kind;
    RealPLKSR (channel_mixer): a layer norm or a group norm, DySample (to_img.init_pos) or a pixel shuffle."""
    mixer = "feats.1.channe_mixer" if "feats.1.channe_mixer.0.weight" in t else "feats.1.channel_mixer"
    lks = [k for k in ("feats.1.lk.conv.weight", "feats.1.lk.convs.0.weight", "feats.1.lk.mn_conv.weight") if k in t]
    if not (has(t, "feats.0.weight", "feats.1.refine.weight", f"{mixer}.0.weight") and lks):
        return None
    dim = t["feats.0.weight"][1][0]
    n = seq_len(t, "feats")
    scale = math.isqrt(t[f"feats.{n - 1}.weight"][1][0] // 3)
    pdim, kernel = t[lks[0]][1][0], t[lks[0]][1][2]
    ea = "feats.1.attn.f.0.weight" in t
    if mixer == "feats.1.channe_mixer":
        ccm = _MIXERS.get((t[f"{mixer}.0.weight"][1][2], t[f"{mixer}.2.weight"][1][2]))
        if ccm is None:
            raise ValueError("Unknown CCM type")  # as spandrel: a file it refuses
        lk = {"conv": "PLK", "convs": "SparsePLK", "mn_conv": "RectSparsePLK"}[lks[0].split(".")[3]]
        return {"arch": "PLKSR", "scale": scale, "features": dim,
                "key": ("PLKSR", "PLKSR", dim, pdim, ccm, lk, ea, scale),
                "variant": f"{n - 2} blocks, {ccm}, {lk} kernel {kernel} on {pdim} channels"
                           + (", element-wise attention" if ea else "")}
    if lks[0] != "feats.1.lk.conv.weight":
        return None  # spandrel reads RealPLKSR's lk.conv only (its KeyError): not this layout
    norm = "layer_norm" if "feats.1.layer_norm.bias" in t else "group_norm"
    up = "dysample" if "to_img.init_pos" in t else "pixelshuffle"
    return {"arch": "PLKSR", "scale": scale, "features": dim,
            "key": ("PLKSR", "RealPLKSR", dim, pdim, ea, norm, up, scale),
            "variant": f"RealPLKSR, {n - 3} blocks, kernel {kernel} on {pdim} channels, {norm.replace('_', ' ')}, "
                       + ("DySample" if up == "dysample" else "pixel shuffle")}


O = "residual_layer.0.residual_layer.0.layer"


def omnisr(t):
    """OmniSR (OmniSRArch.load): width = input's outputs; the scale from up.0's outputs (scale**2 x out_nc); the window
    from the relative position bias' rows ((2w - 1)**2), no bias: pe False, spandrel's default window 8."""
    if not has(t, f"{O}.0.fn.0.weight", "input.weight", "up.0.weight"):
        return None
    feat, in_nc = t["input.weight"][1][:2]
    scale = square_scale(t["up.0.weight"][1][0], in_nc)
    if scale is None:
        raise ValueError(f"no scale gives {t['up.0.weight'][1][0]} output channels")
    pe = f"{O}.2.fn.rel_pos_bias.weight" in t
    window = (math.isqrt(t[f"{O}.2.fn.rel_pos_bias.weight"][1][0]) + 1) // 2 if pe else 8  # spandrel's int((sqrt+1)/2), in ints
    blocks = seq_len(t, "residual_layer")
    return {"arch": "OmniSR", "scale": scale, "features": feat, "key": ("OmniSR", feat, window, pe, scale),
            "variant": f"{blocks} groups, window {window}" + ("" if pe else ", no position bias")}


S = "layers.0.residual_group.blocks.0"


def swin2sr(t):
    """Swin2SR (Swin2SRArch.load): width = conv_first's outputs; heads from layer 0's logit_scale (no bias table: a
    continuous position bias); the window from relative_position_index (w*w rows); the MLP's width; the upsampler by its
    keys, the scale as spandrel counts it (nearest+conv: 4 only)."""
    if not has(t, f"{S}.norm1.weight", "patch_embed.proj.weight", "conv_first.weight", f"{S}.mlp.fc1.bias",
               f"{S}.attn.relative_position_index"):
        return None
    dim, in_nc = t["conv_first.weight"][1][:2]
    heads = t[f"{S}.attn.logit_scale"][1][0]
    window = math.isqrt(t[f"{S}.attn.relative_position_index"][1][0])
    mlp = t[f"{S}.mlp.fc1.bias"][1][0]
    ups = (("conv_bicubic.weight", "pixelshuffle_aux"), ("conv_hr.weight", "nearest+conv"),
           ("conv_after_body_hf.weight", "pixelshuffle_hf"), ("conv_before_upsample.0.weight", "pixelshuffle"),
           ("upsample.0.weight", "pixelshuffledirect"))
    up = next((u for k, u in ups if k in t), "")
    if up == "":
        scale = 1
    elif up == "nearest+conv":
        scale = 4
    elif up == "pixelshuffledirect":
        scale = math.isqrt(t["upsample.0.weight"][1][0] // in_nc)
    else:
        scale = shuffle_scale(t, "upsample")[0]
    return {"arch": "Swin2SR", "scale": scale, "features": dim, "key": ("Swin2SR", dim, heads, window, mlp, up, scale),
            "variant": f"window {window}, {heads} heads, {up or 'no'} upsampler"}


R = "layers.0.swin1"


def drct(t):
    """DRCT (DRCTArch.load): width = conv_first's outputs; heads from layer 0's bias table; the window from its rows
    ((2w - 1)**2); the MLP's width; the dense connections' growth (adjust1's outputs); a pixel-shuffle upsampler where
    conv_last is, else none (x1)."""
    if not has(t, "conv_first.weight", f"{R}.attn.relative_position_bias_table", f"{R}.mlp.fc1.weight",
               "layers.0.adjust1.weight", "layers.0.swin5.norm1.weight", "norm.weight"):
        return None
    dim = t["conv_first.weight"][1][0]
    rows, heads = t[f"{R}.attn.relative_position_bias_table"][1][:2]
    window = (math.isqrt(rows) + 1) // 2
    mlp, gc = t[f"{R}.mlp.fc1.weight"][1][0], t["layers.0.adjust1.weight"][1][0]
    up, scale = ("pixelshuffle", shuffle_scale(t, "upsample")[0]) if "conv_last.weight" in t else ("", 1)
    groups = seq_len(t, "layers")
    return {"arch": "DRCT", "scale": scale, "features": dim, "key": ("DRCT", dim, heads, window, mlp, gc, up, scale),
            "variant": f"{groups} groups, window {window}, {heads} heads, growth {gc}"}


G = "layers.0.blocks.0"


def _split(a, b):
    """RGT's _get_split_size: (w, h) with w*h = a (relative_position_index rows) and (2w-1)(2h-1) = b (rpe_biases rows):
    the square one, else powers of two with w < h."""
    ok = lambda w, h: w * h == a and (2 * w - 1) * (2 * h - 1) == b  # noqa: E731
    side = math.isqrt(a)
    if ok(side, side):
        return side, side
    got = next(((2 ** i, 2 ** j) for i in range(1, 10) for j in range(i + 1, 10) if ok(2 ** i, 2 ** j)), None)
    if got is None:
        raise ValueError(f"No valid split_size found for a={a} and b={b}")  # as spandrel
    return got


def rgt(t):
    """RGT (RGTArch.load): width = conv_first's outputs; heads from pos3's last conv (2h, or 2h + 1 where 2h does not
    divide the width); the split window from the index and bias rows (_split); the MLP's width; the recursive
    generalization conv's outputs (c_ratio x width) of the first layer with two blocks; a pixel-shuffle upsampler."""
    if not has(t, "conv_first.weight", "before_RG.1.weight", f"{G}.gamma", f"{G}.attn.attns.0.rpe_biases",
               f"{G}.attn.attns.0.relative_position_index", f"{G}.mlp.fc1.weight", "conv_before_upsample.0.weight",
               "conv_last.weight"):
        return None
    dim = t["conv_first.weight"][1][0]
    half = t[f"{G}.attn.attns.0.pos.pos3.2.weight"][1][0]
    heads = half * 2 if dim % (half * 2) == 0 else half * 2 + 1
    sw, sh = _split(t[f"{G}.attn.attns.0.relative_position_index"][1][0], t[f"{G}.attn.attns.0.rpe_biases"][1][0])
    mlp = t[f"{G}.mlp.fc1.weight"][1][0]
    layers = seq_len(t, "layers")
    conv = next((t[f"layers.{i}.blocks.1.attn.conv.weight"][1][0] for i in range(layers)
                 if f"layers.{i}.blocks.1.attn.conv.weight" in t), None)
    scale = shuffle_scale(t, "upsample")[0]
    return {"arch": "RGT", "scale": scale, "features": dim, "key": ("RGT", dim, heads, sw, sh, mlp, conv, scale),
            "variant": f"{layers} groups, {heads} heads, split window {sw}x{sh}"}


A = "layers.0.residual_group.layers.0"


def atd(t):
    """ATD (ATDArch.load): width = conv_first's outputs; the window from relative_position_index_SA (w*w rows); heads
    from the window attention's bias table; the token dictionary's size (attn_atd.scale) and its reduced width (wq's
    outputs); the conv FFN's width; the upsampler by its keys; the category size as spandrel guesses it (128 for the
    light model: pixelshuffledirect and 48 wide, else 256)."""
    if not has(t, "relative_position_index_SA", "conv_first.weight", "layers.0.residual_group.td", f"{A}.sigma",
               f"{A}.attn_win.relative_position_bias_table", f"{A}.attn_atd.scale", f"{A}.attn_atd.wq.weight",
               f"{A}.convffn.fc1.weight", "norm.weight"):
        return None
    dim, in_nc = t["conv_first.weight"][1][:2]
    window = math.isqrt(t["relative_position_index_SA"][1][0])
    heads = t[f"{A}.attn_win.relative_position_bias_table"][1][1]
    tokens, reduced = t[f"{A}.attn_atd.scale"][1][0], t[f"{A}.attn_atd.wq.weight"][1][0]
    mlp = t[f"{A}.convffn.fc1.weight"][1][0]
    if "conv_up1.weight" in t:
        up, scale = "nearest+conv", 4
    elif "conv_before_upsample.0.weight" in t:
        up, scale = "pixelshuffle", shuffle_scale(t, "upsample")[0]
    elif "conv_last.weight" in t:
        up, scale = "", 1
    else:
        up, scale = "pixelshuffledirect", math.isqrt(t["upsample.0.weight"][1][0] // in_nc)
    category = 128 if up == "pixelshuffledirect" and dim == 48 else 256
    return {"arch": "ATD", "scale": scale, "features": dim,
            "key": ("ATD", dim, heads, window, tokens, reduced, mlp, category, up, scale),
            "variant": f"window {window}, {heads} heads, {tokens} tokens, categories of {category}, "
                       f"{up or 'no'} upsampler"}


def realcugan(t):
    """Real-CUGAN (RealCUGANArch.load): the class by its keys, as spandrel picks it: conv_final with 4x the output
    channels in -> UpCunet2x_fast, else UpCunet4x; a 5-wide unet1.conv_bottom -> UpCunet3x; else UpCunet2x; "pro"."""
    if not has(t, "unet1.conv1.conv.0.weight", "unet1.conv1_down.weight", "unet1.conv_bottom.weight",
               "unet2.conv1.conv.0.weight", "unet2.conv_bottom.weight", "unet2.conv5.weight", "unet2.conv4_up.weight"):
        return None
    in_nc = t["unet1.conv1.conv.0.weight"][1][1]
    if "conv_final.weight" in t:
        fast = t["conv_final.weight"][1][0] // 4 * 4 == in_nc
        kind, scale = ("UpCunet2x_fast", 2) if fast else ("UpCunet4x", 4)
    elif t["unet1.conv_bottom.weight"][1][2] == 5:
        kind, scale = "UpCunet3x", 3
    else:
        kind, scale = "UpCunet2x", 2
    pro = "pro" in t
    return {"arch": "RealCUGAN", "scale": scale, "features": 64, "key": ("RealCUGAN", kind, pro, scale),
            "variant": kind + (", pro" if pro else "")}


def safmn(t):
    """SAFMN (SAFMNArch.load): width = to_feat's outputs; the FFN's width (ccm.0's outputs); the scale from to_img.0's
    outputs (3 x s**2)."""
    if not has(t, "to_feat.weight", "feats.0.norm1.weight", "feats.0.safm.mfr.0.weight", "feats.0.safm.aggr.weight",
               "feats.0.ccm.ccm.0.weight", "to_img.0.weight"):
        return None
    dim, hidden = t["to_feat.weight"][1][0], t["feats.0.ccm.ccm.0.weight"][1][0]
    scale = math.isqrt(t["to_img.0.weight"][1][0] // 3)  # int(sqrt(x / 3)), in ints: no float overflow
    return {"arch": "SAFMN", "scale": scale, "features": dim, "key": ("SAFMN", dim, hidden, scale),
            "variant": f"{seq_len(t, 'feats')} blocks, FFN {hidden} wide"}
