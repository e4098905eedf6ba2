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


# -- item 5: DualCFGGuider's three conditionings ------------------------------------------------------------------------

def _custom(sdxl, guider: dict, cfg2=None) -> dict:
    """SDXL 1024 px through SamplerCustomAdvanced with guider node 20 (its class and inputs), decoded; cfg2: a second
    sampler (a KSampler at that cfg) on the first one's latent."""
    wf = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": sdxl}},
          "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
          "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
          "20": {"class_type": guider["class"], "inputs": dict(guider["inputs"], model=["4", 0])},
          "21": {"class_type": "KSamplerSelect", "inputs": {"sampler_name": "euler"}},
          "22": {"class_type": "BasicScheduler", "inputs": {"model": ["4", 0], "scheduler": "normal", "steps": 20, "denoise": 1.0}},
          "23": {"class_type": "RandomNoise", "inputs": {"noise_seed": 1}},
          "3": {"class_type": "SamplerCustomAdvanced", "inputs": {"noise": ["23", 0], "guider": ["20", 0], "sampler": ["21", 0],
                                                                  "sigmas": ["22", 0], "latent_image": ["5", 0]}},
          "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
          "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}
    if cfg2 is not None:
        wf["11"] = {"class_type": "KSampler", "inputs": {"seed": 1, "steps": 20, "cfg": cfg2, "sampler_name": "euler",
                    "scheduler": "normal", "denoise": 0.5, "model": ["4", 0], "positive": ["6", 0], "negative": ["6", 0],
                    "latent_image": ["3", 0]}}
        wf["8"]["inputs"]["samples"] = ["11", 0]
    return wf


def _dual(c1, c2, style="regular"):
    return {"class": "DualCFGGuider", "inputs": {"cond1": ["6", 0], "cond2": ["6", 0], "negative": ["6", 0],
                                                 "cfg_conds": c1, "cfg_cond2_negative": c2, "style": style}}


def _wf_est(tmp_path, wf, **kw):
    from gpu_garden.memory.estimate import layouts, workflow

    return workflow.estimate_workflow(wf, tmp_path, **kw)


def _sdxl_file(tmp_path):
    from gpu_garden.memory.estimate import layouts

    return layouts.write_sparse("sdxl_sd_xl_base_1.0", tmp_path / "checkpoints" / "sdxl.safetensors").name


def test_dual_cfg_guider_batches_three_conditionings(tmp_path):
    """Guider_DualCFG.predict_noise (comfy_extras/nodes_custom_sampler.py:835-852) runs calc_cond_batch on [negative,
    middle, positive]: three conds in one model call where memory allows (comfy/samplers.py:263-274). The sampler's
    batch in the model is 3 (CFGGuider's: 2), and ComfyUI's memory_required (linear in the batch, model_base.py:359-383)
    is 3/2 of CFG's. With cfg_cond2_negative 1 the negative is dropped (:846-847): two; both 1: one (CFG off); nested
    (:840-841) always three. The old code read the guider as no cfg at all (SDXL's default: two)."""
    sdxl = _sdxl_file(tmp_path)
    cfg = _wf_est(tmp_path, _custom(sdxl, {"class": "CFGGuider", "inputs": {"positive": ["6", 0], "negative": ["6", 0], "cfg": 7.0}}))
    dual = _wf_est(tmp_path, _custom(sdxl, _dual(8.0, 8.0)))
    assert cfg["latent"]["batch_in_model"] == 2 and dual["latent"]["batch_in_model"] == 3
    assert abs(dual["comfyui_memory_required"] * 2 - cfg["comfyui_memory_required"] * 3) <= 2  # whole bytes each
    assert dual["breakdown"]["sample"]["activations"] > cfg["breakdown"]["sample"]["activations"]
    assert _wf_est(tmp_path, _custom(sdxl, _dual(8.0, 1.0)))["latent"]["batch_in_model"] == 2
    one = _wf_est(tmp_path, _custom(sdxl, _dual(1.0, 1.0)))
    assert one["latent"]["batch_in_model"] == 1 and not one["cfg"]
    assert _wf_est(tmp_path, _custom(sdxl, _dual(1.0, 1.0, "nested")))["latent"]["batch_in_model"] == 3


def test_dual_cfg_conds_helper():
    from gpu_garden.memory.estimate import dual_cfg

    assert [dual_cfg.conds(w) for w in ({}, {"cfg_conds": 5, "cfg_cond2_negative": 1.0}, {"cfg_conds": 1, "cfg_cond2_negative": 1},
                                        {"cfg_conds": 1, "cfg_cond2_negative": 1, "style": "nested"},
                                        {"cfg_conds": 1.0, "cfg_cond2_negative": 4.0})] == [3, 2, 1, 3, 3]


def test_each_sampler_its_own_cfg_beside_a_dual_cfg_guider(tmp_path):
    """Two samplers at one size, each its own cfg (comfy/samplers.py:371: cfg 1 skips the uncond, per sampler): a
    DualCFGGuider at 8/8 then a KSampler at cfg 1.0 samples three conds in the first run (the sample phase's, index 0;
    SDXL 1024 px: 3 x 160 MiB of activations as the estimate counts a cond, +/- the fixed part), one in the second; a
    DualCFGGuider at 1/1 (one cond) then a KSampler at cfg 7: the KSampler's run (index 1) with two, not the guider's
    one cond read as the whole graph's (the first try of this change counted one for both)."""
    sdxl = _sdxl_file(tmp_path)
    a = _wf_est(tmp_path, _custom(sdxl, _dual(8.0, 8.0), cfg2=1.0))
    assert a["latent"]["batch_in_model"] == 3 and a["breakdown"]["sample"]["sampler"]["index"] == 0
    assert a["policy"]["control_sizes"]["single"] == [False, True]
    b = _wf_est(tmp_path, _custom(sdxl, _dual(1.0, 1.0), cfg2=7.0))
    assert b["latent"]["batch_in_model"] == 2 and b["breakdown"]["sample"]["sampler"]["index"] == 1
    assert b["policy"]["control_sizes"]["single"] == [True, False]
    assert 2.9 < a["breakdown"]["sample"]["activations"] / b["breakdown"]["sample"]["activations"] * 2 < 3.1


def test_dual_cfg_on_a_budget_three_two_or_one_at_a_time(tmp_path):
    """calc_cond_batch tries to_batch_temp[:len // i] (comfy/samplers.py:263-274): of three conds all three, else one;
    the loop then runs again on the two left, which batch where memory_required(2) x 1.5 is under the free memory. SDXL
    2048 px, DualCFGGuider 8/8: memory_required batched 3298534883 B (3 conds), two's 2/3 of it x 1.5 = 3298534883 B.
    At 12 GiB the free memory at sampling (5.26 GiB) takes all three; at 10 GiB (3.26 GiB free) not three (4.61 GiB)
    but two (3.07 GiB); at 9 GiB (2.92 GiB) one at a time. The old code read no DualCFGGuider at all."""
    from gpu_garden.memory.estimate import formula

    e = _wf_est(tmp_path, _custom(_sdxl_file(tmp_path), _dual(8.0, 8.0)), width=2048, height=2048)
    got = {}
    for gb in (9, 10, 12):  # judge updates the estimate in place: each read before the next
        j = formula.judge(e, gb * GiB)
        got[gb] = (j["latent"]["batch_in_model"], j["cond_uncond"]["conds"], j["cond_uncond"]["free_at_sample"])
    assert {gb: g[:2] for gb, g in got.items()} == {9: (1, 1), 10: (2, 2), 12: (3, 3)}
    assert 3298534883 * 2 // 3 * 1.5 < got[10][2] < 3298534883 * 1.5 and got[9][2] < 3298534883 < got[12][2] / 1.5


# -- item 3: VAE Decode (Tiled)'s own load ------------------------------------------------------------------------------

def test_tiled_decode_node_loads_the_vae_as_vae_decode_does(capsys):
    """VAE.decode_tiled (comfy/sd.py:829-832) calls load_models_gpu([vae], memory_required=memory_used_decode(
    samples.shape)): one sample's untiled figure ("#TODO: calculate mem required for tile"), as VAE.decode (:795-796).
    free_memory then unloads the diffusion model only as far as that asks (model_management.py:597-603,626,671-673),
    so with VAE Decode (Tiled) the same part of the U-Net stays loaded beside the VAE as with VAE Decode: SDXL batch 4
    at 1024 px on 8 GiB keeps 2.74 GiB of its 4.78 either way. The old code took every other model as unloaded for
    the tiled node (dm_kept 0, so peak_device low by 2.74 GiB)."""
    auto = json.loads(_cli(capsys, "sdxl", "--vram", 8, "--ram", 32, "--batch", 4, "--json"))
    tiled = json.loads(_cli(capsys, "sdxl", "--vram", 8, "--ram", 32, "--batch", 4, "--json", "--vae-decode", "tiled"))
    a, t = auto["breakdown"]["vae_decode"], tiled["breakdown"]["vae_decode"]
    assert 2.7 * GiB < a["dm_kept"] < 2.8 * GiB and t["dm_kept"] == a["dm_kept"] and t["te_kept"] == a["te_kept"]
    assert tiled["vae"]["comfy_per_sample"] == auto["vae"]["comfy_per_sample"]
    assert t["activations"] < a["activations"]  # the tile's need, not the whole sample's, is the row's (unchanged)
    assert "memory_required" in next(x for x in tiled["assumptions"] if x.startswith("VAE decode:"))
