"""--vae-tile PX (and the node's vae_tile): the tile size a user decodes with, over the runner's default (diffusers:
the VAE config's sample_size, vae.DIFFUSERS_KL_TILE; ComfyUI: VAE Decode (Tiled)'s 512 px, spec.TILE_NODE). Expected
bytes written out from diffusers' autoencoder_kl.py tiled_decode: tiles every 3/4 tile, each decoded at 1216 elements
per pixel (vae.DIFFUSERS_KL_DECODE_DTYPE, fp16 on newer GPUs) in fp16 plus its fp32 output, the decoded tiles (3 channels, fp16) held."""
import argparse

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.estimate import families, formula as E, layouts, report

TILE_512_FP16 = (1216 * 2 + 3 * 4) * 512 * 512
# 2048 px in 512 px tiles every 384: 6 per side (five of 512, the last 128); peak at tile (4, 4) with four whole rows
# and four tiles of the fifth row held
HELD_BEFORE_TILE_44 = (4 * (5 * 512 * 512 + 512 * 128) + 4 * 512 * 512) * 3 * 2
# 1024 px in 512 px tiles every 384: 3 per side (512, 512, 256); peak at the fifth tile with three 512x512 and one
# 512x256 held
HELD_BEFORE_FIFTH = (3 * 512 * 512 + 512 * 256) * 3 * 2


def _comps(name):
    return families.split_components(layouts.table(name), name)


def _policy(argv):
    ap = argparse.ArgumentParser()
    report.add_cli_arguments(ap)
    return dict(report.policy_from_args(ap.parse_args(argv)), _no_knobs=True, dynamic_vram="off")


def test_cli_tile_overrides_the_sdxl_config_tile():
    pol = _policy(["--runner", "diffusers", "--vae-decode", "tiled", "--vae-dtype", "fp16", "--vae-tile", "512"])
    assert pol["tile"] == {"tile": 512}
    e = E.estimate(_comps("sdxl_sd_xl_base_1.0"), 2048, 2048, policy=pol)
    assert "36 tiles of 512 px" in e["vae"]["how"]
    assert e["vae"]["bytes"] == TILE_512_FP16 + HELD_BEFORE_TILE_44
    assert e["policy"]["tile"] == {"tile": 512}  # the JSON says which tile was assumed


def test_cli_tile_gives_diffusers_tiling_to_a_vae_without_a_config_tile():
    # a KL VAE alone: no family, so no config sample_size is known; the stated tile is diffusers' tile
    pol = _policy(["--runner", "diffusers", "--vae-decode", "tiled", "--vae-dtype", "fp16", "--vae-tile", "512"])
    e = E.estimate(_comps("vae_sd15_vae-ft-mse-840000-ema-pruned"), 1024, 1024, policy=pol)
    assert "9 tiles of 512 px" in e["vae"]["how"]
    assert e["vae"]["bytes"] == TILE_512_FP16 + HELD_BEFORE_FIFTH


def test_comfyui_node_tile_follows_the_flag():
    comps = _comps("sdxl_sd_xl_base_1.0")
    small = E.estimate(comps, 2048, 2048, policy=_policy(["--vae-tile", "256"]))
    default = E.estimate(comps, 2048, 2048, policy=_policy([]))
    assert default["policy"]["tile"] is None
    # VAE Decode (Tiled) holds one tile at a time: a 256 px tile is a quarter of the 512 px default's pixels
    assert small["breakdown"]["vae_decode_tiled"]["activations"] < default["breakdown"]["vae_decode_tiled"]["activations"] / 3


@pytest.mark.parametrize("px", ["0", "32", "-512", "20000"])
def test_bad_tile_is_a_clear_error(px):
    with pytest.raises(UserError, match="VAE tile size"):
        E.estimate(_comps("sdxl_sd_xl_base_1.0"), 1024, 1024, policy=_policy(["--vae-tile", px]))


def test_typed_tile_wins_over_the_graph_node(tmp_path, capsys):
    import json

    from gpu_garden.memory import cli
    layouts.write_sparse("vae_flux_ae", tmp_path / "models" / "vae" / "ae.safetensors")
    wf = {"last_node_id": 3, "links": [], "extra": {}, "version": 0.4, "nodes": [
        {"id": 1, "type": "VAELoader", "widgets_values": ["ae.safetensors"]},
        {"id": 2, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1]},
        {"id": 3, "type": "VAEDecodeTiled", "widgets_values": [512, 64, 64, 8]}]}
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(wf))
    outs = []
    for extra in ([], ["--vae-tile", "256"]):
        cli.main(["estimate", "--workflow", str(p), "--models-dir", str(tmp_path / "models"), "--vram", "24", "--json", *extra])
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0]["policy"]["tile"] == {"tile": 512, "frames": 64}      # the node's tile_size and temporal_size
    assert outs[1]["policy"]["tile"] == {"tile": 256, "frames": 64}      # the typed size, the node's frames
    assert outs[1]["phases"]["vae_decode"] < outs[0]["phases"]["vae_decode"]


def test_a_tile_alone_means_a_tiled_decode():
    """--vae-tile 256 without --vae-decode (the node has no vae_decode input): SDXL at 2048 on 8 GiB was judged as VAE
    Decode with its OOM retry in the node's default 512 px tiles, the typed tile ignored. A tile given is VAE Decode
    (Tiled) with that tile, as workflow.py reads a VAEDecodeTiled node: the 512 px tile's 574619648 B of activations
    (test_estimate_fixups3: 64-latent tiles) over four, 256 px tiles holding a quarter of the pixels: 143654912."""
    budget = 8 * 2 ** 30
    alone = E.estimate(_comps("sdxl_sd_xl_base_1.0"), 2048, 2048, policy=dict(_policy(["--vae-tile", "256"]), budget=budget))
    typed = E.estimate(_comps("sdxl_sd_xl_base_1.0"), 2048, 2048,
                       policy=dict(_policy(["--vae-decode", "tiled", "--vae-tile", "256"]), budget=budget))
    assert alone["policy"]["vae_decode"] == "tiled" and alone["vae"]["how"].startswith("VAE Decode (Tiled)")
    assert alone["breakdown"]["vae_decode"]["activations"] == 574619648 // 4
    assert alone["phases"]["vae_decode"] == typed["phases"]["vae_decode"]
    untiled = E.estimate(_comps("sdxl_sd_xl_base_1.0"), 2048, 2048,
                         policy=dict(_policy(["--vae-decode", "untiled", "--vae-tile", "256"]), budget=budget))
    assert untiled["policy"]["vae_decode"] == "untiled"  # an explicit mode still wins


@pytest.mark.parametrize("tile,ok", [({"tile": 64}, True), ({"tile": 4096}, True), ({"tile": 63}, False),
                                     ({"tile": 4097}, False), ({"tile": 16384}, False), ({"tile": 512, "frames": 1}, True),
                                     ({"tile": 512, "frames": 4096}, True), ({"tile": 512, "frames": 0}, False),
                                     ({"tile": 512, "frames": 4097}, False)])
def test_tile_limits_are_vae_decode_tiled_s(tile, ok):
    """ComfyUI 0.8.0 nodes.py VAEDecodeTiled: tile_size 64-4096 px, temporal_size up to 4096 (a 16384 px tile passed)."""
    pol = dict(_policy(["--vae-decode", "tiled"]), tile=tile)
    if ok:
        assert E.estimate(_comps("sdxl_sd_xl_base_1.0"), 1024, 1024, policy=pol)["policy"]["tile"] == tile
    else:
        with pytest.raises(UserError, match="VAE tile"):
            E.estimate(_comps("sdxl_sd_xl_base_1.0"), 1024, 1024, policy=pol)
