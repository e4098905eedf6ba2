"""fix68d (issue 15 items 1, 2, 5): the estimate's phases as ComfyUI 0.8.0 runs them, each checked against its source
(/work/hostenv/ComfyUI): the text encoders on the CPU where text_encoder_device() says so, the image-to-video start
image's VAE encode, VAE Decode (Tiled)'s own load, DualCFGGuider's three conditionings."""
import json

from gpu_garden.memory.estimate import families, formula, layouts

MiB, GiB = 1024 ** 2, 1024 ** 3


def _sdxl(gb, **policy):
    comps = families.split_components(layouts.table("sdxl_sd_xl_base_1.0"), "sdxl_sd_xl_base_1.0")
    return formula.judge(formula.estimate(comps, 1024, 1024, policy=policy), gb * GiB)


def _cli(capsys, *args):
    from gpu_garden.memory import cli

    rc = cli.main(["estimate", *map(str, args)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


# -- item 1: the text encoders on the CPU -----------------------------------------------------------------------------

def test_text_encode_phase_is_off_the_card_where_comfyui_runs_the_text_encoders_on_the_cpu():
    """text_encoder_device() (comfy/model_management.py:875-884) is the CPU under --lowvram / --novram and where
    should_use_fp16(prioritize_performance=False) is False (a GTX 16xx, Pascal on Linux); CLIP.__init__ loads the CLIP
    there (comfy/sd.py:111). The node passes that answer (policy te_on_device False): SDXL's 1.52 GiB of CLIP-L and
    bigG are not on the card in the text encode, which holds the context and the reserve only (850 MiB = 450 + 400).
    The old code counted the CLIP's weights and activations there (text_encode 2.38 GiB)."""
    on, off = _sdxl(8, te_on_device=True), _sdxl(8, te_on_device=False)
    assert on["breakdown"]["text_encode"]["weights"] == on["weights"]["text_encoders"] > GiB
    assert off["breakdown"]["text_encode"]["weights"] == off["breakdown"]["text_encode"]["activations"] == 0
    assert off["phases"]["text_encode"] == 450 * MiB + 400 * MiB
    assert (on["policy"]["text_encoder_device"], off["policy"]["text_encoder_device"]) == ("gpu", "cpu")


def test_cli_text_encoder_device_flag_and_the_json_says_which(capsys):
    """--text-encoder-device cpu (a GTX 16xx the CLI cannot tell from an RTX 20xx) moves the text encode off the card and
    its weights into host RAM (the RAM line's need grows by the 1.52 GiB of CLIP files ComfyUI would have left on a 24 GiB card); the default is the
    GPU on cuda, as ComfyUI picks it where fp16 works; --gpu-halves none on linux (Pascal) is the CPU."""
    d = json.loads(_cli(capsys, "sdxl", "--vram", 8, "--ram", 32, "--json"))
    c = json.loads(_cli(capsys, "sdxl", "--vram", 8, "--ram", 32, "--json", "--text-encoder-device", "cpu"))
    p = json.loads(_cli(capsys, "sdxl", "--vram", 8, "--ram", 32, "--json", "--gpu-halves", "none"))
    assert d["policy"]["text_encoder_device"] == "gpu" and d["breakdown"]["text_encode"]["weights"] > GiB
    assert c["policy"]["text_encoder_device"] == p["policy"]["text_encoder_device"] == "cpu"
    assert c["breakdown"]["text_encode"]["weights"] == p["breakdown"]["text_encode"]["weights"] == 0
    # on 24 GiB ComfyUI's loads leave the CLIP whole on the card at sampling (te_loaded.py); on the CPU it is in RAM
    d, c = (json.loads(_cli(capsys, "sdxl", "--vram", 24, "--ram", 32, "--json", *x)) for x in ((), ("--text-encoder-device", "cpu")))
    assert d["breakdown"]["sample"]["te_kept"] == d["weights"]["text_encoders"] and c["breakdown"]["sample"]["te_kept"] == 0
    assert c["host_ram"]["needed"] - d["host_ram"]["needed"] == d["weights"]["text_encoders"]
