"""The pixel upscale step's figures (ups63, issue 15): spandrel's real classes (ComfyUI 0.8.0's UpscaleModelLoader:
ModelLoader().load_from_state_dict, comfy_extras/nodes_upscale_model.py:36-39) built from state dicts of the common
architectures' key layouts, then the call ImageUpscaleWithModel makes on each tile (the descriptor's __call__:
pad, forward, clamp; nodes_upscale_model.py:86) traced on meta with gpu_garden's tracer (memory/trace) at tiles of
512, 256 and 128 pixels, fp32 as the node runs it. Recorded per configuration: spandrel's detected scale, the
module's dtype when the state dict is fp16 (load_state_dict copies into the fp32 parameters: the file's dtype is not
kept), module_size (ComfyUI's model_management.module_size: the state dict's bytes), the traced weights and activation
peak per tile, the activation bytes per input pixel of a tile, and ComfyUI's memory_required (comfyui_request) (estimate/pixel_upscale.TILE_BYTES_PER_PIXEL is read
from this file: tests/unit/test_estimate_ups63.py checks they agree).

  esrgan_4x_64nf_23nb        RRDBNet x4 (ESRGAN old keys): 4x-UltraSharp, NMKD Siax/Superscale, RealESRGAN_x4plus
  esrgan_4x_64nf_6nb         RRDBNet x4, 6 blocks (RealESRGAN_x4plus_anime_6B): the peak does not follow the blocks
  esrgan_2x_64nf_23nb        RRDBNet x2 with one upsampling conv (2x ESRGAN models)
  esrgan_2x_64nf_23nb_unshuffle  RealESRGAN_x2plus: pixel-unshuffled input (12 channels), two upsampling convs
  compact_4x_64nf_32nc       SRVGGNetCompact x4, 32 convs: realesr-general-x4v3
  compact_4x_64nf_16nc       SRVGGNetCompact x4, 16 convs: realesr-animevideov3
  compact_2x_64nf_16nc       SRVGGNetCompact x2
  span_4x_48nf / span_2x_48nf  SPAN, 48 features (4x-ClearRealityV1, 2xNomosUni_span) (arch64, as each below)
  swinir_m_4x_classical / swinir_m_2x_classical  SwinIR-M classical SR (001_classicalSR_DF2K_s64w8_SwinIR-M_x4/x2)
  swinir_m_4x_real           SwinIR-M real-world SR, nearest+conv upsampler (003_realSR_BSRGAN_DFO_s64w8_SwinIR-M_x4_GAN)
  swinir_l_4x_real           SwinIR-L real-world SR (003_realSR_BSRGAN_DFOWMFC_s64w8_SwinIR-L_x4_GAN: 240 wide, 9 groups, 8 heads)
  swinir_s_4x_light          SwinIR lightweight (002_lightweightSR_DIV2K_s64w8_SwinIR-S_x4: 60 wide, pixelshuffledirect)
  hat_4x / hat_2x            HAT (HAT_SRx4 / x2: 180 wide, window 16, overlap 0.5)
  hat_l_4x                   HAT-L (HAT-L_SRx4: 12 groups; the peak is in one group: the same per-pixel figure as HAT)
  hat_s_4x                   HAT-S (HAT-S_SRx4: 144 wide, compress 24, squeeze 24)
  dat_4x / dat_2x            DAT (DAT_x4 / x2, 4xNomos8kDAT: 180 wide, split 8x32, expansion 4)
  dat_s_4x                   DAT-S (split 8x16, expansion 2)
  dat_2_4x                   DAT-2 (split 8x32, expansion 2: 4xRealWebPhoto_v4_dat2)
  dat_light_4x               DAT-light (60 wide, one group of 18, pixelshuffledirect)
  realplksr_dysample_4x      RealPLKSR with DySample (arch65, as each below: 4xNomos2_realplksr_dysample, traiNNer-redux's
                             realplksr: 64 wide, 28 blocks, kernel 17, split 0.25, element-wise attention, layer norm)
  realplksr_4x               RealPLKSR, pixel shuffle (4xNomosWebPhoto_RealPLKSR: the same body)
  realplksr_dysample_2x      RealPLKSR with DySample x2 (2x releases of the same trainer config)
  plksr_4x                   PLKSR (the paper's PLKSR x4: DCCM, kernel 17, no element-wise attention)
  plksr_tiny_4x              PLKSR-tiny (the paper's: 12 blocks, CCM, kernel 13)
  omnisr_4x / omnisr_2x      OmniSR (the paper's OmniSR_X4/X2_DIV2K: 64 wide, 5 groups, window 8, position bias)
  swin2sr_4x_classical / swin2sr_2x_classical  Swin2SR classical SR (Swin2SR_ClassicalSR_X4_64 / X2_64: 180 wide, window 8)
  swin2sr_4x_real            Swin2SR real-world SR, nearest+conv (Swin2SR_RealworldSR_X4_64_BSRGAN_PSNR)
  swin2sr_2x_light           Swin2SR lightweight (Swin2SR_Lightweight_X2_64: 60 wide, 4 groups, pixelshuffledirect)
  drct_4x                    DRCT (DRCT_SRx4_DF2K: 180 wide, 6 groups, window 16, growth 32)
  drct_l_4x                  DRCT-L (DRCT-L_SRx4_DF2K, 4xNomos2_hq_drct-l: 12 groups; the peak is in one group)
  atd_4x                     ATD (ATD_SRx4: 210 wide, window 16, 128 tokens reduced to 20, categories of 256)
  atd_light_4x               ATD-light (ATD_light_SRx4: 48 wide, 4 groups, 4 heads, 64 tokens, pixelshuffledirect)
  rgt_4x / rgt_s_4x          RGT (RGT_x4: 180 wide, 8 groups, split 8x32, c_ratio 0.5) / RGT-S (RGT_S_x4: 6 groups)
  realcugan_2x / _3x / _4x   Real-CUGAN (up2x/up3x/up4x-latest-*.pth: UpCunet2x/3x/4x), realcugan_2x_pro (pro-*-up2x.pth)
  safmn_4x / safmn_l_4x      SAFMN (SAFMN_DF2K_x4: 36 wide, 8 blocks) / SAFMN-L (SAFMN_L_Real_x4: 128 wide, 16 blocks)
  For each: the key estimate/upscale_archs.py reads from the state dict's shapes (pixel_upscale.detect), so the table
  there is checked against the classes that made these figures.

    COMFYUI_PYTHON=... $COMFYUI_PYTHON benchmarks/pixel_upscale_tile.py   (ComfyUI's Python: spandrel and torch)
    ... benchmarks/pixel_upscale_tile.py --only NAME...   (traces only these; the file's other configs are kept)
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
from support.pack import load_pack  # noqa: E402

load_pack()

import torch  # noqa: E402
from spandrel import ModelLoader  # noqa: E402
from spandrel.architectures.ATD import ATD  # noqa: E402
from spandrel.architectures.Compact import Compact  # noqa: E402
from spandrel.architectures.DAT import DAT  # noqa: E402
from spandrel.architectures.ESRGAN import ESRGAN  # noqa: E402
from spandrel.architectures.DRCT import DRCT  # noqa: E402
from spandrel.architectures.HAT import HAT  # noqa: E402
from spandrel.architectures.OmniSR import OmniSR  # noqa: E402
from spandrel.architectures.PLKSR import PLKSR, RealPLKSR  # noqa: E402
from spandrel.architectures.RealCUGAN import UpCunet2x, UpCunet3x, UpCunet4x  # noqa: E402
from spandrel.architectures.RGT import RGT  # noqa: E402
from spandrel.architectures.SAFMN import SAFMN  # noqa: E402
from spandrel.architectures.SPAN import SPAN  # noqa: E402
from spandrel.architectures.SPAN.__arch import span as span_arch  # noqa: E402
from spandrel.architectures.Swin2SR import Swin2SR  # noqa: E402
from spandrel.architectures.SwinIR import SwinIR  # noqa: E402

from gpu_garden.memory.estimate import pixel_upscale  # noqa: E402
from gpu_garden.memory.trace import tracer  # noqa: E402
from results import save  # noqa: E402

TILES = (512, 256, 128)
CONFIGS = {
    "esrgan_4x_64nf_23nb": lambda: ESRGAN(in_nc=3, out_nc=3, num_filters=64, num_blocks=23, scale=4),
    "esrgan_4x_64nf_6nb": lambda: ESRGAN(in_nc=3, out_nc=3, num_filters=64, num_blocks=6, scale=4),
    "esrgan_2x_64nf_23nb": lambda: ESRGAN(in_nc=3, out_nc=3, num_filters=64, num_blocks=23, scale=2),
    "esrgan_2x_64nf_23nb_unshuffle": lambda: ESRGAN(in_nc=12, out_nc=3, num_filters=64, num_blocks=23, scale=4,
                                                    shuffle_factor=2),
    "compact_4x_64nf_32nc": lambda: Compact(num_in_ch=3, num_out_ch=3, num_feat=64, num_conv=32, upscale=4),
    "compact_4x_64nf_16nc": lambda: Compact(num_in_ch=3, num_out_ch=3, num_feat=64, num_conv=16, upscale=4),
    "compact_2x_64nf_16nc": lambda: Compact(num_in_ch=3, num_out_ch=3, num_feat=64, num_conv=16, upscale=2),
    "span_4x_48nf": lambda: SPAN(num_in_ch=3, num_out_ch=3, feature_channels=48, upscale=4),
    "span_2x_48nf": lambda: SPAN(num_in_ch=3, num_out_ch=3, feature_channels=48, upscale=2),
    "swinir_m_4x_classical": lambda: _swinir(4, "pixelshuffle"),
    "swinir_m_2x_classical": lambda: _swinir(2, "pixelshuffle"),
    "swinir_m_4x_real": lambda: _swinir(4, "nearest+conv"),
    "swinir_l_4x_real": lambda: _swinir(4, "nearest+conv", embed_dim=240, depths=[6] * 9, num_heads=[8] * 9,
                                        resi_connection="3conv"),
    "swinir_s_4x_light": lambda: _swinir(4, "pixelshuffledirect", embed_dim=60, depths=[6] * 4, num_heads=[6] * 4),
    "hat_4x": lambda: _hat(4),
    "hat_2x": lambda: _hat(2),
    "hat_l_4x": lambda: _hat(4, depths=[6] * 12, num_heads=[6] * 12),
    "hat_s_4x": lambda: _hat(4, embed_dim=144, compress_ratio=24, squeeze_factor=24),
    "dat_4x": lambda: _dat(4),
    "dat_2x": lambda: _dat(2),
    "dat_s_4x": lambda: _dat(4, split_size=[8, 16], expansion_factor=2.0),
    "dat_2_4x": lambda: _dat(4, expansion_factor=2.0),
    "dat_light_4x": lambda: _dat(4, embed_dim=60, depth=[18], num_heads=[6], expansion_factor=2.0,
                                 resi_connection="3conv", upsampler="pixelshuffledirect"),
    "realplksr_dysample_4x": lambda: _realplksr(4, dysample=True),
    "realplksr_4x": lambda: _realplksr(4),
    "realplksr_dysample_2x": lambda: _realplksr(2, dysample=True),
    "plksr_4x": lambda: PLKSR(dim=64, n_blocks=28, upscaling_factor=4, ccm_type="DCCM", kernel_size=17, split_ratio=0.25,
                              lk_type="PLK", use_ea=False),
    "plksr_tiny_4x": lambda: PLKSR(dim=64, n_blocks=12, upscaling_factor=4, ccm_type="CCM", kernel_size=13,
                                   split_ratio=0.25, lk_type="PLK", use_ea=False),
    "omnisr_4x": lambda: OmniSR(num_feat=64, block_num=1, pe=True, window_size=8, res_num=5, up_scale=4, bias=True),
    "omnisr_2x": lambda: OmniSR(num_feat=64, block_num=1, pe=True, window_size=8, res_num=5, up_scale=2, bias=True),
    "swin2sr_4x_classical": lambda: _swin2sr(4, "pixelshuffle"),
    "swin2sr_2x_classical": lambda: _swin2sr(2, "pixelshuffle"),
    "swin2sr_4x_real": lambda: _swin2sr(4, "nearest+conv"),
    "swin2sr_2x_light": lambda: _swin2sr(2, "pixelshuffledirect", embed_dim=60, depths=[6] * 4, num_heads=[6] * 4),
    "drct_4x": lambda: _drct(4),
    "drct_l_4x": lambda: _drct(4, depths=[6] * 12, num_heads=[6] * 12),
    "atd_4x": lambda: _atd(4),
    "atd_light_4x": lambda: _atd(4, embed_dim=48, depths=[6] * 4, num_heads=[4] * 4, category_size=128, num_tokens=64,
                                 reducted_dim=8, convffn_kernel_size=7, mlp_ratio=1.0, upsampler="pixelshuffledirect"),
    "rgt_4x": lambda: _rgt(4),
    "rgt_s_4x": lambda: _rgt(4, depth=[6] * 6, num_heads=[6] * 6),
    "realcugan_2x": lambda: UpCunet2x(in_channels=3, out_channels=3),
    "realcugan_3x": lambda: UpCunet3x(in_channels=3, out_channels=3),
    "realcugan_4x": lambda: UpCunet4x(in_channels=3, out_channels=3),
    "realcugan_2x_pro": lambda: UpCunet2x(in_channels=3, out_channels=3, pro=True),
    "safmn_4x": lambda: SAFMN(dim=36, n_blocks=8, ffn_scale=2.0, upscaling_factor=4),
    "safmn_l_4x": lambda: SAFMN(dim=128, n_blocks=16, ffn_scale=2.0, upscaling_factor=4),
}


def _swinir(scale, upsampler, **kw):
    cfg = dict(img_size=64, window_size=8, img_range=1.0, depths=[6] * 6, embed_dim=180, num_heads=[6] * 6, mlp_ratio=2,
               resi_connection="1conv")
    return SwinIR(upscale=scale, in_chans=3, upsampler=upsampler, **{**cfg, **kw})


def _hat(scale, **kw):
    cfg = dict(img_size=64, window_size=16, compress_ratio=3, squeeze_factor=30, conv_scale=0.01, overlap_ratio=0.5,
               img_range=1.0, depths=[6] * 6, embed_dim=180, num_heads=[6] * 6, mlp_ratio=2, resi_connection="1conv")
    return HAT(upscale=scale, in_chans=3, upsampler="pixelshuffle", **{**cfg, **kw})


def _dat(scale, **kw):
    cfg = dict(img_size=64, embed_dim=180, split_size=[8, 32], depth=[6] * 6, num_heads=[6] * 6, expansion_factor=4.0,
               resi_connection="1conv", upsampler="pixelshuffle")
    return DAT(upscale=scale, in_chans=3, **{**cfg, **kw})


def _swin2sr(scale, upsampler, **kw):
    cfg = dict(img_size=64, window_size=8, img_range=1.0, depths=[6] * 6, embed_dim=180, num_heads=[6] * 6, mlp_ratio=2,
               resi_connection="1conv")
    return Swin2SR(upscale=scale, in_chans=3, upsampler=upsampler, **{**cfg, **kw})


def _drct(scale, **kw):
    cfg = dict(img_size=64, window_size=16, depths=[6] * 6, embed_dim=180, num_heads=[6] * 6, mlp_ratio=2.0, gc=32,
               img_range=1.0, resi_connection="1conv", upsampler="pixelshuffle")
    return DRCT(upscale=scale, in_chans=3, **{**cfg, **kw})


def _atd(scale, **kw):
    cfg = dict(img_size=64, embed_dim=210, depths=[6] * 6, num_heads=[6] * 6, window_size=16, category_size=256,
               num_tokens=128, reducted_dim=20, convffn_kernel_size=5, mlp_ratio=2.0, img_range=1.0,
               resi_connection="1conv", upsampler="pixelshuffle")
    return ATD(upscale=scale, in_chans=3, **{**cfg, **kw})


def _rgt(scale, **kw):
    cfg = dict(img_size=64, embed_dim=180, depth=[6] * 8, num_heads=[6] * 8, mlp_ratio=2.0, img_range=1.0,
               resi_connection="1conv", split_size=[8, 32], c_ratio=0.5)
    return RGT(upscale=scale, in_chans=3, **{**cfg, **kw})


def _realplksr(scale, **kw):
    cfg = dict(dim=64, n_blocks=28, kernel_size=17, split_ratio=0.25, use_ea=True, norm_groups=4, layer_norm=True)
    return RealPLKSR(upscaling_factor=scale, **{**cfg, **kw})


def measure(build) -> dict:
    # an fp16 file's state dict, its integer buffers kept (DAT's loader reads its split window from rpe_biases' values)
    sd = {k: v.to(torch.float16) if v.is_floating_point() else v for k, v in build().state_dict().items()}
    header = {k: (str(v.dtype), list(v.shape)) for k, v in sd.items()}  # what the estimate reads from a file
    d = ModelLoader().load_from_state_dict(sd).eval()
    module_size = sum(t.nbytes for t in d.model.state_dict().values())  # model_management.module_size
    tiles = {}
    for t in TILES:
        r = tracer.trace(d.model, torch.empty(1, 3, t, t), call=d)
        tiles[str(t)] = {"activations_peak": r["activations_peak"], "weights": r["weights"], "at": r["at"]["module"],
                         "bytes_per_pixel": r["activations_peak"] / (t * t)}
    read = pixel_upscale.detect(header)
    return {"architecture": d.architecture.id, "scale": d.scale, "tags": d.tags, "loaded_dtype": str(d.dtype),
            "read": {"arch": read["arch"], "scale": read["scale"], "key": read.get("key")} if read else None,
            "module_size": module_size, "values": sum(int(v.numel()) for v in sd.values()), "tiles": tiles,
            "bytes_per_pixel": tiles["512"]["bytes_per_pixel"],
            "linear_in_tile_area": len({v["bytes_per_pixel"] for v in tiles.values()}) == 1}


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=sorted(CONFIGS),
                    help="trace only these configs; the results file's other configs are kept as they are")
    only = ap.parse_args(argv).only
    # SPAN's eval forward re-fuses each Conv3XC's kernels (span.py update_params: a few kernel-sized tensors, no
    # activation) by assigning .data, which fake tensors refuse: the fused kernels are the built ones, kept as they are
    span_arch.Conv3XC.update_params = lambda self: None
    kept = {}
    if only:  # the other configs as the results file has them (one the file lacks is traced too)
        kept = json.loads((REPO / "benchmarks" / "results" / "pixel_upscale_tile.json").read_text())["configs"]
    configs = {name: measure(build) if not only or name in only or name not in kept else kept[name] for name, build in CONFIGS.items()}
    keys = {}
    for name, c in configs.items():  # one figure a key: a key that two different peaks share misses a number
        k = json.dumps(c["read"] and c["read"]["key"])
        if c["read"] and c["read"]["key"] and keys.setdefault(k, c["bytes_per_pixel"]) != c["bytes_per_pixel"]:
            raise SystemExit(f"{name}: key {k} has {c['bytes_per_pixel']} and {keys[k]} bytes per pixel")
    data = {"torch": torch.__version__, "spandrel": __import__("spandrel").__version__, "tiles": list(TILES),
            "configs": configs,
            # ComfyUI's memory_required (pixel_upscale.comfy_request): its tile term for one unit of scale, and an x4
            # ESRGAN on a 1024 x 1024 image
            "comfyui_request": {"per_scale": pixel_upscale.comfy_request(0, 1, (0, 0, 0)),
                                "esrgan_4x_1024": pixel_upscale.comfy_request(
                                    configs["esrgan_4x_64nf_23nb"]["module_size"], 4, (1024, 1024, 1))}}
    path = save("pixel_upscale_tile", "COMFYUI_PYTHON=... $COMFYUI_PYTHON benchmarks/pixel_upscale_tile.py", data)
    print(json.dumps(data, indent=1))
    print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
