"""fix66h: review rev66d's estimate findings (issue 15), each checked against ComfyUI 0.8.0's source.

R1: a LatentUpscaleBy after another upscale was sized from the graph's largest base latent; ComfyUI scales the latent it
is given (nodes.py:1298-1314: round(samples.shape[-1] * scale_by) latent px), and LatentUpscale resizes to its widgets
(nodes.py:1279-1295: max(64, width) // 8 latent px). R1b: the batch is the input latent's (common_upscale resizes the
last two dims only), not the graph's largest latent's."""
from gpu_garden.memory.estimate import workflow

KS = {"seed": 1, "steps": 20, "cfg": 7.0, "sampler_name": "euler", "scheduler": "normal", "denoise": 0.5,
      "model": ["4", 0], "positive": ["6", 0], "negative": ["6", 0]}


def _base(w, h, batch):
    return {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "x.safetensors"}},
            "5": {"class_type": "EmptyLatentImage", "inputs": {"width": w, "height": h, "batch_size": batch}},
            "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
            "3": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["5", 0], denoise=1.0)}}


def _chain(wf, steps, last="3"):
    """Each step (id, class, widgets) takes the previous sampler's latent and is sampled again; the last one decoded."""
    for i, t, inputs in steps:
        wf[i] = {"class_type": t, "inputs": dict(inputs, samples=[last, 0])}
        wf[i + "k"] = {"class_type": "KSampler", "inputs": dict(KS, latent_image=[i, 0])}
        last = i + "k"
    wf["8"] = {"class_type": "VAEDecode", "inputs": {"samples": [last, 0], "vae": ["4", 2]}}
    wf["9"] = {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}
    return wf


BY = "LatentUpscaleBy"


def by(x):
    return {"upscale_method": "nearest-exact", "scale_by": x}


def test_two_latent_upscale_by_in_a_chain():
    """rev66d wf/two_ups.json: 1024 px batch 2 -> 128 latent px; x1.5 = 192 (1536 px); x1.5 again = 288 latent px =
    2304 px, batch 2 (ComfyUI's nodes, chain_comfy.py: (2, 4, 288, 288)). Old code: both 1536 (the base scaled)."""
    info = workflow.read(_chain(_base(1024, 1024, 2), [("10", BY, by(1.5)), ("12", BY, by(1.5))]), None)
    assert info["size"] == (2304, 2304, 1, 2)
    assert any(n.startswith("LatentUpscaleBy (scale_by 1.5 of 1536x1536) resizes the latent to 2304x2304")
               for n in info["notes"]), info["notes"]


def test_latent_upscale_then_latent_upscale_by():
    """rev66d wf/ups_then_by.json: LatentUpscale 1536 x 1536 (1536 // 8 = 192 latent px), then x1.5 = 288 -> 2304 px
    batch 2. Old code: the LatentUpscaleBy scaled the base 1024 -> 1536."""
    ups = {"upscale_method": "nearest-exact", "width": 1536, "height": 1536, "crop": "disabled"}
    info = workflow.read(_chain(_base(1024, 1024, 2), [("10", "LatentUpscale", ups), ("12", BY, by(1.5))]), None)
    assert info["size"] == (2304, 2304, 1, 2)


def test_latent_upscale_with_one_side_zero_then_by():
    """LatentUpscale width 0, height 768 on a 1024 x 512 latent (128 x 64 latent px): width = max(64, round(128 *
    768 / 64)) = 1536, height 768 -> latents 192 x 96; x1.25 -> 240 x 120 -> 1920 x 960 px."""
    ups = {"upscale_method": "nearest-exact", "width": 0, "height": 768, "crop": "disabled"}
    info = workflow.read(_chain(_base(1024, 512, 1), [("10", "LatentUpscale", ups), ("12", BY, by(1.25))]), None)
    assert info["size"] == (1920, 960, 1, 1)


def test_decode_after_two_upscales_is_the_chained_size():
    """links.latent (the decode's image size) follows the chain: 512 px -> x2 = 1024 -> x2 = 2048 px (64 -> 128 -> 256
    latent px); old code: Unread at the LatentUpscaleBy."""
    from gpu_garden.memory.estimate import links
    wf = _chain(_base(512, 512, 3), [("10", BY, by(2.0)), ("12", BY, by(2.0))])
    v = links.view(wf)
    assert links.latent(v, ["12k", 0], 0) == (2048, 2048, 3)


def test_unfollowed_input_is_named_not_sized_from_the_base():
    """A LatentUpscaleBy on a latent the estimate does not follow (a LoadLatent file) beside a 1024 px branch: named
    as from its input, not the base 1024 x 1.5 = 1536 (old code); the 1024 px latent is the one sized."""
    wf = _chain(_base(1024, 1024, 1), [("10", BY, by(1.5))], last="30")
    wf["30"] = {"class_type": "LoadLatent", "inputs": {"latent": "a.latent"}}
    wf["31"] = {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}}  # the base branch, saved
    wf["32"] = {"class_type": "SaveImage", "inputs": {"images": ["31", 0], "filename_prefix": "y"}}
    info = workflow.read(wf, None)
    assert info["size"] == (1024, 1024, 1, 1)
    assert (BY, "its input latent, times scale_by (a latent the estimate does not follow)") in info["from_input"]


def test_latent_upscale_by_keeps_its_input_batch():
    """rev66d wf/branch_batch.json: 512 px batch 3 x2 beside a 1024 px batch 1 branch: ComfyUI's upscale is (3, 4,
    128, 128), batch 3 at 1024 px (chain_comfy.py). Old code: batch 1 (the graph's largest latent's)."""
    wf = _chain(_base(512, 512, 3), [("10", BY, by(2.0))])
    wf.update({"20": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
               "21": {"class_type": "KSampler", "inputs": dict(KS, latent_image=["20", 0], denoise=1.0)},
               "22": {"class_type": "VAEDecode", "inputs": {"samples": ["21", 0], "vae": ["4", 2]}},
               "23": {"class_type": "SaveImage", "inputs": {"images": ["22", 0], "filename_prefix": "y"}}})
    info = workflow.read(wf, None)
    assert info["size"] == (1024, 1024, 1, 3)


# -- rev66d R2: the decode batch ComfyUI chose, over the free memory it read by our figure, runs out and retries tiled --

LTXV_3 = [3, 128, 13, 16, 24]  # LTX-Video 768x512x97f batch 3: 128 channels, (97-1)/8+1 frames, /32 (spec ltxv)


def _ltxv(free):
    from gpu_garden.memory.estimate import vae
    return vae.phase("ltxv", LTXV_3, "bf16", free, device="cuda")


def test_a_batch_over_the_free_memory_by_our_figure_retries_tiled():
    """comfy/sd.py:789-797: batch = int(free / memory_used_decode), then the batch is decoded; an OOM (l.805) retries
    tiled. LTXV's memory_used_decode is under our per-sample figure, so with free = 3 x per x 1.02 ComfyUI picks all 3
    (int(3 x 1.02 x per / comfy) = 3), whose 3 x per x 1.05 (the 5 % margin) is over free: the tiled retry, the untiled
    try 3 samples. Old code: 'VAE Decode, 3 of 3 sample(s) at once' (only one sample over free retried)."""
    per, comfy = _ltxv(None)["per_sample"], _ltxv(None)["comfy_per_sample"]
    assert comfy < per and int(3 * per * 1.02 / comfy) == 3
    got = _ltxv(int(3 * per * 1.02))
    assert got["fallback"] and got["tiled"] and got["tried"] == 3
    assert got["how"].startswith("VAE Decode runs out of memory on 3 samples at once")
    roomy = _ltxv(int(3 * per * 1.06))  # 3 x per x 1.05 fits: decoded untiled, 3 at once
    assert not roomy["fallback"] and roomy["batch"] == 3


def test_ltxv_batch_3_on_18_5_runs_tiled_with_the_kept_model_in_the_untiled_try(capsys):
    """rev66d R2 (estimate ltxv --batch 3 --vram 18.5): the free memory VAE.decode reads is the budget less the
    context, the VAE and the diffusion model ComfyUI left loaded (vae_resident); ComfyUI's batch int(free / comfy) is 3,
    and 3 x our per-sample x 1.05 is over it: RUNS TILED, where the old code read FITS. The untiled try's row counts
    the model still loaded (the VAE's weights + dm_kept). est67: the text encoder the text encode left (T5, 9,524,621,312
    B on the card) stays too (te_loaded.py): free before the VAE 18.5 GiB - 450 MiB - 3,846,770,944 - 9,524,621,312 =
    6,020,972,288 B is over free_memory's ask, int(1.1 x 838,388,578) + 4,600,627,200 + 400 MiB = 5,942,285,035, so
    nothing is unloaded; 6,020,972,288 - 838,388,578 = 5,182,583,710 free / 4,600,627,200 = 1 sample (3 before est67),
    and one sample (our 4,954,686,750 x 1.05) is over it: still RUNS TILED, the untiled row counting te_kept too."""
    import json

    from support.cli_run import estimate
    _, js, _ = estimate(capsys, "ltxv", "--batch", "3", "--vram", "18.5", "--json")
    d = json.loads(js)
    b, v = d["breakdown"]["vae_decode"], d["vae"]
    vae_w = b["weights"] - b["dm_kept"] - b["te_kept"]  # fix68g: the retried row's weights hold what stays loaded too
    free = int(18.5 * 2**30) - d["fixed"]["cuda_context"] - vae_w - b["dm_kept"] - b["te_kept"]
    assert b["dm_kept"] == 3846770944 and b["te_kept"] == 9524621312 and free == 5182583710
    assert int(free / v["comfy_per_sample"]) == 1 == v["tried"] and v["per_sample"] * 1.05 > free
    assert v["fallback"] and "vae_decode" in d["tiled_retry"]
    untiled = vae_w + b["dm_kept"] + b["te_kept"] + v["per_sample"] + int(0.05 * v["per_sample"]) + sum(d["fixed"].values())
    assert abs(d["tiled_retry"]["vae_decode"]["untiled"] - untiled) <= 2
    _, out, _ = estimate(capsys, "ltxv", "--batch", "3", "--vram", "18.5")
    assert "verdict: RUNS TILED" in out


# -- rev66d R5: the guider's cfg (SamplerCustomAdvanced samples with its guider's) -------------------------------------

def _guided(guider, inputs):
    """FLUX-style SamplerCustomAdvanced graph whose guider is `guider` (API format)."""
    return {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "x.safetensors"}},
            "5": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}},
            "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
            "20": {"class_type": guider, "inputs": dict(inputs, model=["4", 0], positive=["6", 0])},
            "21": {"class_type": "RandomNoise", "inputs": {"noise_seed": 1}},
            "22": {"class_type": "KSamplerSelect", "inputs": {"sampler_name": "euler"}},
            "23": {"class_type": "BasicScheduler", "inputs": {"scheduler": "simple", "steps": 20, "denoise": 1.0,
                                                              "model": ["4", 0]}},
            "3": {"class_type": "SamplerCustomAdvanced", "inputs": {"noise": ["21", 0], "guider": ["20", 0],
                                                                    "sampler": ["22", 0], "sigmas": ["23", 0],
                                                                    "latent_image": ["5", 0]}},
            "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
            "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}


def test_cfg_guider_cfg_is_read():
    """CFGGuider.execute sets its cfg widget on the guider (nodes_custom_sampler.py:817-820); 3.5 > 1 runs the
    uncond (samplers.py:371 skips it only at cfg 1). Old code: None (no sampler cfg widget), read as CFG off for FLUX."""
    assert workflow.read(_guided("CFGGuider", {"cfg": 3.5, "negative": ["6", 0]}), None)["cfg"] is True
    assert workflow.read(_guided("CFGGuider", {"cfg": 1.0, "negative": ["6", 0]}), None)["cfg"] is False


def test_basic_guider_is_cfg_one():
    """BasicGuider sets the positive only (Guider_Basic, l.776-778) and samples at CFGGuider's cfg 1.0: CFG off.
    Old code: None (the family's default)."""
    assert workflow.read(_guided("BasicGuider", {}), None)["cfg"] is False


def test_cfg_guider_cfg_read_from_a_ui_workflow():
    """UI format: CFGGuider's widgets_values are [cfg] (its only widget). Old code: None."""
    nodes = [{"id": 4, "type": "CheckpointLoaderSimple", "widgets_values": ["x.safetensors"],
              "outputs": [{"name": "MODEL", "links": [1]}, {"name": "CLIP", "links": []}, {"name": "VAE", "links": [5]}]},
             {"id": 5, "type": "EmptyLatentImage", "widgets_values": [1024, 1024, 1], "outputs": [{"links": [3]}]},
             {"id": 20, "type": "CFGGuider", "widgets_values": [3.5], "inputs": [{"name": "model", "link": 1}],
              "outputs": [{"links": [2]}]},
             {"id": 3, "type": "SamplerCustomAdvanced", "inputs": [{"name": "guider", "link": 2},
                                                                    {"name": "latent_image", "link": 3}],
              "outputs": [{"links": [4]}]},
             {"id": 8, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 4}, {"name": "vae", "link": 5}],
              "outputs": [{"links": [6]}]},
             {"id": 9, "type": "SaveImage", "widgets_values": ["x"], "inputs": [{"name": "images", "link": 6}]}]
    links = [[1, 4, 0, 20, 0, "MODEL"], [2, 20, 0, 3, 1, "GUIDER"], [3, 5, 0, 3, 4, "LATENT"], [4, 3, 0, 8, 0, "LATENT"],
             [5, 4, 2, 8, 1, "VAE"], [6, 8, 0, 9, 0, "IMAGE"]]
    assert workflow.read({"nodes": nodes, "links": links, "version": 0.4}, None)["cfg"] is True


# -- rev66d wf/cfg1_second.json: each sampler's own cfg where each sampler's run is counted ----------------------------

def _sdxl(tmp_path):
    from gpu_garden.memory.estimate import layouts
    d = tmp_path / "models"
    layouts.write_sparse("sdxl_sd_xl_base_1.0", d / "checkpoints" / "x.safetensors")
    return d


def _sample_acts(wf, d):
    e = workflow.estimate_workflow(wf, d)
    return e["breakdown"]["sample"]["activations"], e


def test_a_second_pass_at_cfg_1_is_counted_with_one_conditioning(tmp_path):
    """A hires fix: 1024 px batch 2 at cfg 7, LatentUpscaleBy 1.5, a second pass at 1536 px batch 2 at cfg 1. ComfyUI
    skips the uncond of a sampler at cfg 1 (samplers.py:371), per sampler: the second pass holds 2 samples of 36864
    tokens in the model, the base pass 4 (cond + uncond batched) of 16384 (2 x 36864 > 4 x 16384: the second pass's
    run is the sample phase). Expected: the same pass alone (one KSampler at 1536 px batch 2, cfg 1: CFG off), the
    one-sampler path. Old code: the largest cfg for every sampler, 4 samples of 36864 in the model."""
    d = _sdxl(tmp_path)
    both = _chain(_base(1024, 1024, 2), [("10", BY, by(1.5))])
    both["10k"]["inputs"]["cfg"] = 1.0
    alone = _base(1536, 1536, 2)
    alone["3"]["inputs"]["cfg"] = 1.0
    alone.update({"8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
                  "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}})
    got, e = _sample_acts(both, d)
    want, e1 = _sample_acts(alone, d)
    assert e["cfg"] and not e1["cfg"]  # the estimate's CFG is on (the base pass's cfg 7), the pass alone's off
    assert got == want
    assert e["breakdown"]["sample"]["sampler"] == {"index": 1, "size": [1536, 1536], "batch": 2, "cfg1": True}
    assert any("cfg 1: no uncond" in a for a in e["assumptions"]), e["assumptions"]
    both["10k"]["inputs"]["cfg"] = 7.0  # the guard: both at cfg 7, the second pass with cond and uncond
    alone["3"]["inputs"]["cfg"] = 7.0
    assert _sample_acts(both, d)[0] == _sample_acts(alone, d)[0] > want
