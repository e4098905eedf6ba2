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
        if gb == 12:
            assert j["cond_uncond"]["why"].startswith("cond and uncond batched (x3)")
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


# -- item 2: the image-to-video start image's VAE encode ----------------------------------------------------------------

def _wan22_files(d):
    from gpu_garden.memory.estimate import layouts

    layouts.write_sparse("wan_wan2.2_ti2v_5B_fp16", d / "diffusion_models" / "wan22.safetensors")
    layouts.write_sparse("te_umt5_xxl_fp16", d / "text_encoders" / "umt5.safetensors")
    layouts.write_sparse("vae_wan2.2_vae", d / "vae" / "wan22_vae.safetensors")


def _wan22_i2v(linked=True, node="Wan22ImageToVideoLatent", length=121):
    g = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "wan22.safetensors", "weight_dtype": "default"}},
         "2": {"class_type": "CLIPLoader", "inputs": {"clip_name": "umt5.safetensors", "type": "wan"}},
         "3": {"class_type": "VAELoader", "inputs": {"vae_name": "wan22_vae.safetensors"}},
         "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["2", 0]}},
         "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "", "clip": ["2", 0]}},
         "12": {"class_type": "LoadImage", "inputs": {"image": "cat.png"}},
         "55": {"class_type": node, "inputs": {"vae": ["3", 0], "width": 1280, "height": 704, "length": length, "batch_size": 1}},
         "10": {"class_type": "KSampler", "inputs": {"seed": 1, "steps": 20, "cfg": 5.0, "sampler_name": "euler",
                "scheduler": "simple", "denoise": 1.0, "model": ["1", 0], "positive": ["6", 0], "negative": ["7", 0],
                "latent_image": ["55", 0]}},
         "8": {"class_type": "VAEDecode", "inputs": {"samples": ["10", 0], "vae": ["3", 0]}},
         "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}
    if linked:
        g["55"]["inputs"]["start_image"] = ["12", 0]
    return g


def test_i2v_node_encodes_its_start_image_before_sampling(tmp_path):
    """Wan22ImageToVideoLatent (comfy_extras/nodes_wan.py:1278-1279) resizes start_image[:length] to 1280x704 and
    VAE-encodes it: one frame of a still image, a phase of its own before sampling (run order: text encode, encode,
    sample). Without a start image it encodes nothing (no phase). The old code had the phase for Wan 2.1 I2V model files
    only (formula's i2v_encode), so this graph had none."""
    from gpu_garden.memory.estimate import workflow

    _wan22_files(tmp_path)
    e = workflow.estimate_workflow(_wan22_i2v(), tmp_path)
    assert list(e["phases"])[:3] == ["text_encode", "vae_encode", "sample"]
    assert e["_ctx"]["i2v_encode"] == (1280, 704, 1)
    assert e["breakdown"]["vae_encode"]["weights"] == e["weights"]["vae"]
    assert "vae_encode" not in workflow.estimate_workflow(_wan22_i2v(linked=False), tmp_path)["phases"]


def test_i2v_vae_left_loaded_when_sampling_starts(tmp_path):
    """The encode's load_models_gpu([vae]) (comfy/sd.py:869-870) loads the VAE after the text encode; the sampler's load
    (model_management.py:621-707) unloads what is loaded only as far as it asks, the partly offloaded first, then the
    smaller (:584-619, comfy_load.unload_until). On 48 GiB: room 48 GiB - 450 MiB; UMT5 (10.58 GiB) and the VAE
    (1.31 GiB) load whole, the 5B model's ask 1.1 x 9.31 GiB + its minimum leaves both: the VAE is on the card while
    sampling, and get_free_memory there (cond/uncond's choice) is lower by exactly its bytes than without the encode. On
    24 GiB the sampler's load unloads the smaller VAE first (all of it; UMT5 partly stays)."""
    from gpu_garden.memory.estimate import workflow

    _wan22_files(tmp_path)
    got = {}
    for gb in (24, 48):
        for linked in (True, False):
            e = formula.judge(workflow.estimate_workflow(_wan22_i2v(linked), tmp_path), gb * GiB)
            got[gb, linked] = (e["breakdown"]["sample"].get("vae_kept"), e["cond_uncond"]["free_at_sample"], e["weights"]["vae"])
    vae = got[48, True][2]
    assert 1.3 * GiB < vae < 1.32 * GiB
    assert got[48, True][0] == vae and got[48, False][0] is None
    assert got[48, False][1] - got[48, True][1] == vae
    assert got[24, True][0] == 0 and got[24, True][1] == got[24, False][1]


def test_i2v_nodes_encode_sizes():
    """Frames each node encodes for a one-frame start image: WanImageToVideo pads it to all `length` frames
    (nodes_wan.py:43-47); Wan22ImageToVideoLatent / HunyuanImageToVideo / LTXVImgToVideo the image's one; Cosmos
    pads to min(length, ((1 - 1) // 8 + 2) * 8 - 7) = 9 (nodes_cosmos.py:32-39). An unlinked image input: none."""
    from gpu_garden.memory.estimate import i2v_nodes

    assert [i2v_nodes.frames(r, 121) for r in ("length", "image", "cosmos")] == [121, 1, 9]
    assert i2v_nodes.frames("cosmos", 5) == 5
    wf = {"5": {"class_type": "WanImageToVideo", "inputs": {"start_image": ["1", 0], "width": 832, "height": 480, "length": 81}},
          "6": {"class_type": "LTXVImgToVideo", "inputs": {"image": ["1", 0], "width": 768, "height": 512, "length": 97}},
          "7": {"class_type": "CosmosImageToVideoLatent", "inputs": {"width": 1280, "height": 704, "length": 121}}}
    keyed = {k: (n["class_type"], n["inputs"]) for k, n in wf.items()}
    assert i2v_nodes.largest(wf, keyed) == (832, 480, 81)
    assert i2v_nodes.largest(wf, {k: keyed[k] for k in ("6", "7")}) == (768, 512, 1)
    ui = {"nodes": [{"id": 5, "type": "WanImageToVideo", "inputs": [{"name": "start_image", "link": 3}]},
                    {"id": 6, "type": "WanImageToVideo", "inputs": [{"name": "start_image", "link": None}]}]}
    assert i2v_nodes._linked(ui, (None, 5), "start_image") and not i2v_nodes._linked(ui, (None, 6), "start_image")
