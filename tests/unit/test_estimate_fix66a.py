"""fix66a: the estimate findings of audit aud66a (issue 15), each checked against ComfyUI 0.8.0's source.

F3: LatentUpscaleBy (nodes.py:1298-1314) makes its input latent's sides times scale_by, rounded in latent pixels
(round(samples.shape[-1] * scale_by), Python's round: half to even), so the image is a multiple of 8 px; it was
estimated at the base size. F4: cond and uncond batched only where ComfyUI's memory check batches them
(comfy/samplers.py:263-274), on the budget and on each card tier."""
from gpu_garden.memory.estimate import workflow


def _hires_api(w, h, batch, by):
    """txt2img at w x h, LatentUpscaleBy, a second KSampler, decode, save (API format)."""
    ks = {"seed": 1, "steps": 20, "cfg": 7.0, "sampler_name": "euler", "scheduler": "normal", "denoise": 1.0,
          "model": ["4", 0], "positive": ["6", 0], "negative": ["6", 0]}
    return {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "x.safetensors"}},
            "5": {"class_type": "EmptyLatentImage", "inputs": {"width": w, "height": h, "batch_size": batch}},
            "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a cat", "clip": ["4", 1]}},
            "3": {"class_type": "KSampler", "inputs": dict(ks, latent_image=["5", 0])},
            "10": {"class_type": "LatentUpscaleBy", "inputs": {"upscale_method": "nearest-exact", "scale_by": by,
                                                               "samples": ["3", 0]}},
            "11": {"class_type": "KSampler", "inputs": dict(ks, latent_image=["10", 0], denoise=0.5)},
            "8": {"class_type": "VAEDecode", "inputs": {"samples": ["11", 0], "vae": ["4", 2]}},
            "9": {"class_type": "SaveImage", "inputs": {"images": ["8", 0], "filename_prefix": "x"}}}


def _hires_ui(w, h, batch, by):
    """The same graph in UI format (widgets_values, links [id, from, slot, to, slot, type])."""
    ks = [1, "fixed", 20, 7.0, "euler", "normal", 1.0]
    nodes = [{"id": 4, "type": "CheckpointLoaderSimple", "widgets_values": ["x.safetensors"],
              "outputs": [{"name": "MODEL", "links": [1, 2]}, {"name": "CLIP", "links": []}, {"name": "VAE", "links": [7]}]},
             {"id": 5, "type": "EmptyLatentImage", "widgets_values": [w, h, batch], "outputs": [{"name": "LATENT", "links": [3]}]},
             {"id": 3, "type": "KSampler", "widgets_values": ks,
              "inputs": [{"name": "model", "link": 1}, {"name": "latent_image", "link": 3}],
              "outputs": [{"name": "LATENT", "links": [4]}]},
             {"id": 10, "type": "LatentUpscaleBy", "widgets_values": ["nearest-exact", by],
              "inputs": [{"name": "samples", "link": 4}], "outputs": [{"name": "LATENT", "links": [5]}]},
             {"id": 11, "type": "KSampler", "widgets_values": ks[:6] + [0.5],
              "inputs": [{"name": "model", "link": 2}, {"name": "latent_image", "link": 5}],
              "outputs": [{"name": "LATENT", "links": [6]}]},
             {"id": 8, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 6}, {"name": "vae", "link": 7}],
              "outputs": [{"name": "IMAGE", "links": [8]}]},
             {"id": 9, "type": "SaveImage", "widgets_values": ["x"], "inputs": [{"name": "images", "link": 8}]}]
    links = [[1, 4, 0, 3, 0, "MODEL"], [2, 4, 0, 11, 0, "MODEL"], [3, 5, 0, 3, 3, "LATENT"], [4, 3, 0, 10, 0, "LATENT"],
             [5, 10, 0, 11, 3, "LATENT"], [6, 11, 0, 8, 0, "LATENT"], [7, 4, 2, 8, 1, "VAE"], [8, 8, 0, 9, 0, "IMAGE"]]
    return {"nodes": nodes, "links": links, "version": 0.4}


def test_latent_upscale_by_scales_the_input_latent_api():
    """1048 px: a 131-pixel latent; 131 x 1.5 = 196.5, which Python's round takes to 196 (half to even), x 8 = 1568 px
    (rounding the pixels, 1572, or half up, 1576, would differ). Batch 2 is the input's. Old code: 1048 x 1048."""
    info = workflow.read(_hires_api(1048, 1048, 2, 1.5), None)
    assert info["size"] == (1568, 1568, 1, 2)
    assert any(n.startswith("LatentUpscaleBy (scale_by 1.5 of 1048x1048) resizes the latent to 1568x1568")
               for n in info["notes"]), info["notes"]
    assert not info["from_input"]


def test_latent_upscale_by_scales_the_input_latent_ui():
    """1000 x 768 px at 1.25: latents 125 x 96 -> 156.25 -> 156 and 120 -> 1248 x 960 px (pixels would be 1250)."""
    info = workflow.read(_hires_ui(1000, 768, 1, 1.25), None)
    assert info["size"] == (1248, 960, 1, 1)


def test_latent_upscale_by_below_one_leaves_the_base_size_the_largest():
    """scale_by 0.5 makes a smaller second pass: the base 1024 x 1024 is the largest, and is estimated."""
    info = workflow.read(_hires_api(1024, 1024, 1, 0.5), None)
    assert info["size"] == (1024, 1024, 1, 1)
    assert any("resizes the latent to 512x512" in n for n in info["notes"]), info["notes"]


def test_latent_upscale_by_out_of_range_is_named_not_sized():
    """ComfyUI refuses scale_by 9 (max 8.0, nodes.py:1303): not sized, named as before."""
    info = workflow.read(_hires_api(1024, 1024, 1, 9.0), None)
    assert info["size"] == (1024, 1024, 1, 1)
    assert [t for t, _ in info["from_input"]] == ["LatentUpscaleBy"]


def test_latent_upscale_by_follows_its_own_input_latent():
    """Two branches: a 768 px latent sampled and saved, and a 512 px one upscaled by 2. The upscale is its input's
    512 -> 1024 px (64 x 2 = 128 latent px), not the graph's largest latent (768 -> 1152)."""
    wf = _hires_api(512, 512, 1, 2.0)
    ks = dict(wf["3"]["inputs"], latent_image=["20", 0])
    wf.update({"20": {"class_type": "EmptyLatentImage", "inputs": {"width": 768, "height": 768, "batch_size": 1}},
               "21": {"class_type": "KSampler", "inputs": ks},
               "22": {"class_type": "VAEDecode", "inputs": {"samples": ["21", 0], "vae": ["4", 2]}},
               "23": {"class_type": "SaveImage", "inputs": {"images": ["22", 0], "filename_prefix": "y"}}})
    info = workflow.read(wf, None)
    assert info["size"] == (1024, 1024, 1, 1)
    assert any(n.startswith("LatentUpscaleBy (scale_by 2 of 512x512)") for n in info["notes"]), info["notes"]


# -- F4: cond and uncond batched or one at a time, as ComfyUI chooses on the budget -----------------------------------

def _wan22_json(capsys, *extra):
    import json

    from support.cli_run import estimate
    rc, out, _ = estimate(capsys, "wan22", "--frames", "121", "--json", *extra)
    return json.loads(out)


def test_cond_uncond_one_at_a_time_where_comfyui_memory_check_fails(capsys):
    """Wan 2.2 TI2V 5B at 1280x704x121f (latent [1, 48, 31, 44, 80]). ComfyUI's memory_required batched (x2): area
    2 x 31 x 44 x 80 = 218,240, x 2 bytes x 0.01 x factor 1.383 = 6,036.5 MiB (model_base.py:378-379). samplers.py:273
    batches while 1.5 x that, 8,854.8 MiB (8.65 GiB), is under the free memory at sampling: 16 GiB - 450 MiB context
    - 9.31 GiB of fp16 weights (loaded whole: 6.25 GiB free is over the 0.8 GiB-floored 2.95 GiB + 400 MiB minimum)
    = ~6.25 GiB: one at a time, batch 1 in the model. Old code: batched (2) on both.
    est67: the text encoder (umt5-xxl fp16, 10.58 GiB) the text encode left loaded is unloaded by the sampler's load only
    as far as 1.1 x 9.31 GiB + (5.89 GiB batched + 400 MiB) = 16.53 GiB is free (te_loaded.py). On 16 GiB that is all of
    it (15.56 - 10.58 = 4.98 free); on 24 GiB, 23.56 - 10.58 = 12.98 free, so 3.55 GiB of it goes and 7.03 GiB stays:
    16.53 - 9.31 = ~7.21 GiB free < 8.65: one at a time there too (before est67: ~14.25 GiB, batched). On 32 GiB
    31.56 - 10.58 = 20.98 is over 16.53: it stays whole, 20.98 - 9.31 = ~11.67 GiB free > 8.65: batched."""
    e16 = _wan22_json(capsys, "--vram", "16")
    assert e16["latent"]["batch_in_model"] == 1 and e16["cfg"] is False and e16["cfg_separate"] is True
    assert e16["cond_uncond"]["batched"] is False
    assert 6.2 * 2**30 < e16["cond_uncond"]["free_at_sample"] < 6.3 * 2**30
    assert any(a.startswith("cond and uncond one at a time: ComfyUI batches them only while 1.5 x") for a in e16["assumptions"])
    assert not any(k["id"] == "cfg_sequential" for k in e16["knobs"])  # it is what the figures count already
    e24 = _wan22_json(capsys, "--vram", "24")
    assert e24["latent"]["batch_in_model"] == 1 and e24["cond_uncond"]["batched"] is False
    assert 7.2 * 2**30 < e24["cond_uncond"]["free_at_sample"] < 7.25 * 2**30
    assert 7.0 * 2**30 < e24["cond_uncond"]["te_kept"] < 7.05 * 2**30
    e32 = _wan22_json(capsys, "--vram", "32")
    assert e32["latent"]["batch_in_model"] == 2 and e32["cfg"] is True and e32["cond_uncond"]["batched"] is True
    assert 11.6 * 2**30 < e32["cond_uncond"]["free_at_sample"] < 11.7 * 2**30
    # where a knob to split them is offered, it says ComfyUI batches them here (not "does this by itself": it does not);
    # since fix66a's F2 the decode, with part of the model still loaded, is the peak here, so none may be offered
    assert all("ComfyUI batches them on this budget" in k["label"] for k in e32["knobs"] if k["id"] == "cfg_sequential")


def test_cond_uncond_forced_by_the_flag(capsys):
    """--cond-uncond batched on 16 GiB: counted batched though ComfyUI would split them; the knob says it was forced."""
    e = _wan22_json(capsys, "--vram", "16", "--cond-uncond", "batched")
    assert e["latent"]["batch_in_model"] == 2 and "cond_uncond" not in e
    assert "forced batched here" in next(k for k in e["knobs"] if k["id"] == "cfg_sequential")["label"]
    s = _wan22_json(capsys, "--vram", "24", "--cond-uncond", "separate")
    assert s["latent"]["batch_in_model"] == 1


def test_each_card_tier_chooses_on_its_own_budget(capsys):
    """The tiers (workflow.tiers) choose per card: on a 16 GB card one at a time (free ~6 GiB < 8.65 GiB, above),
    on 24 GB too since est67 (23.55 GiB visible: 6.58 GiB of the text encoder stays, ~7.2 GiB free), on 32 GB and over
    batched (31.36 GiB visible: ~11 GiB free > 8.65): each tier's peak is the forced mode's peak on that card, whichever
    mode the estimate itself was judged with."""
    from gpu_garden.memory.estimate import formula, spec, workflow

    def est(cu=None, budget=None):
        from gpu_garden.memory.estimate import families, layouts
        comps = []
        for name in ("wan_wan2.2_ti2v_5B_fp16", "te_umt5_xxl_fp16", "vae_wan2.2_vae"):
            comps.extend(families.split_components(layouts.table(name), name))
        e = formula.estimate(comps, 1280, 704, 121, 1, cfg=None if cu is None else cu == "batched",
                             policy={"dynamic_vram": "off", "cond_uncond": cu, "budget": budget})
        return formula.judge(e, budget)

    for judged_on in (16 * 2**30, 24 * 2**30):
        tiers = {t["gb"]: t for t in workflow.tiers(est(budget=judged_on))}
        for gb, mode in ((16, "separate"), (24, "separate"), (32, "batched"), (48, "batched")):
            forced = est(mode, spec.card_bytes(gb))
            assert tiers[gb]["peak"] == forced["peak"], (judged_on, gb, mode)


# -- F2: the VAE decode's batch with the diffusion model still loaded --------------------------------------------------

def _sdxl_b4(capsys, vram):
    import json

    from support.cli_run import estimate
    rc, out, _ = estimate(capsys, "sdxl", "--batch", "4", "--vram", str(vram), "--json")
    return json.loads(out)


def test_vae_decode_batch_with_the_unet_left_loaded(capsys):
    """SDXL 1024x1024 batch 4 (the auditor's). ComfyUI's memory_used_decode for one sample (comfy/sd.py:320):
    2178 x 128 x 128 x 64 x 2 bytes (bf16) = 4,567,597,056 B (4.254 GiB). VAE.decode (sd.py:793-800) loads the VAE with
    that as memory_required: load_models_gpu frees only vae x 1.1 + max(0.8 GiB + 400 MiB, 4.254 GiB + 400 MiB) = about
    4.82 GiB (model_management.py:626,671-673, free_memory stops when that much is free, :597-603). On 16 GiB: 16 - 450
    MiB context - 4.78 GiB U-Net = 10.78 GiB free already, so the U-Net stays; after the VAE (0.16 GiB) ~10.62 GiB free,
    batch_number = int(10.62 / 4.254) = 2. On 12 GiB: ~6.62 GiB -> 1. Old code (U-Net counted as unloaded): 15.4 GiB
    -> 3 of 4, and 2 of 4 on 12 GiB."""
    e16, e12 = _sdxl_b4(capsys, 16), _sdxl_b4(capsys, 12)
    assert (e16["vae"]["batch"], e12["vae"]["batch"]) == (2, 1)
    dm = next(c["resident"] for c in e16["components"] if c["role"] == "diffusion_model")
    for e in (e16, e12):  # the U-Net stays loaded and sizes the batch, but is not the decode's need (the lead's mend:
        # ComfyUI unloads it as far as one sample needs the room, so the rows and the verdict leave it out)
        assert e["breakdown"]["vae_decode"]["dm_kept"] == dm
        assert e["breakdown"]["vae_decode"]["weights"] < dm


def test_vae_decode_unloads_the_unet_only_as_far_as_it_needs(capsys):
    """On 8 GiB: 8 GiB - 450 MiB = 7.56 GiB room; with the U-Net (4.78) 2.78 GiB free, under the ~4.82 GiB the load
    needs (1.1 x 0.156 GiB VAE + 4.254 + 400 MiB): ComfyUI unloads part of the U-Net (model_unload(memory_to_free),
    model_management.py:526-531) until that much is free: 7.56 - 4.82 = ~2.74 GiB of it stays. Free after the VAE
    loads ~4.66 GiB: 1 sample at a time."""
    e = _sdxl_b4(capsys, 8)
    assert 2.70 * 2**30 < e["breakdown"]["vae_decode"]["dm_kept"] < 2.78 * 2**30
    assert e["vae"]["batch"] == 1


# -- F7: a retried VAE decode's rows say what they count ---------------------------------------------------------------

def _rows(out):
    return {line[:22].rstrip(): line for line in out.splitlines() if line[:22].strip() and line[22:23] == " "
            and len(line.split()) >= 6}


def test_retried_decode_shows_the_untiled_try_and_the_retry(capsys):
    """Wan 2.2 5B, 121 frames, fp32 VAE, no budget (figured on 16 GB): one sample is over the free memory, so
    VAE.decode runs out of memory and retries tiled (comfy/sd.py:801-818). Old code: the 'VAE decode' row showed the
    retry (4.80) and the untiled try only in the peak line; with a budget where the whole phase is over the budget but
    the retry fits the row showed the untiled try instead. Now the row is the untiled try in both cases and a
    'tiled retry' row under it is what the peak line counts."""
    import json

    from support.cli_run import estimate
    _, out, _ = estimate(capsys, "wan22", "--frames", "121", "--vae-dtype", "fp32")
    _, js, _ = estimate(capsys, "wan22", "--frames", "121", "--vae-dtype", "fp32", "--json")
    t = json.loads(js)["tiled_retry"]["vae_decode"]
    rows = _rows(out)
    assert rows["VAE decode"].split()[-1] == f"{t['untiled'] / 2**30:.2f}" == "21.96"
    assert rows["  tiled retry"].split()[-1] == f"{t['tiled'] / 2**30:.2f}" == "4.80"
    assert "(untiled 21.96 GiB)" in " ".join(out.split())


def test_a_decode_over_the_budget_whose_retry_fits_has_both_rows_too(capsys):
    """SDXL 2048x2048 batch 8 on 8 GiB: VAE Decode decodes a batch that does not fit, the retry does (verdict.as_run);
    the row is the untiled try (as before), the 'tiled retry' row is new, and carries the peak mark when it is the peak."""
    from support.cli_run import estimate
    _, out, _ = estimate(capsys, "sdxl", "--width", "2048", "--height", "2048", "--batch", "8", "--vram", "8",
                         "--cond-uncond", "separate")
    rows = _rows(out)
    assert "  tiled retry" in rows and float(rows["VAE decode"].split()[-1]) > 8 > float(rows["  tiled retry"].split()[-1])


# -- F8: the route's card tiers on a --cpu host -----------------------------------------------------------------------

def test_route_tiers_on_a_cpu_host_are_a_gpu_s(monkeypatch, tmp_path):
    """SDXL base checkpoint at 1024x1024 through the workflow route (estimate_routes.estimate_graph). On a GPU ComfyUI
    loads the U-Net in fp16 (model_management.unet_dtype): 4.78 GiB of weights, and the sample phase fits an 8 GB card
    (the CLI says fits). A ComfyUI started with --cpu holds fp32 weights (9.56 GiB), so the tiers, judged with the
    host's CPU policy, said an 8 GB card "runs with offload". A card tier is a GPU: the tiers on a fake CPU host are
    the ones on a fake CUDA host. Old code: 8 GB 'runs with at least ... offloaded' on the CPU host."""
    from pathlib import Path

    from gpu_garden.memory.estimate import layouts
    from support.fit_stubs import route_per_device

    files = {"sdxl.safetensors": str(layouts.write_sparse("sdxl_sd_xl_base_1.0", tmp_path / "sdxl.safetensors"))}
    graph = {"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "sdxl.safetensors"}},
             "2": {"class_type": "EmptyLatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}}}
    outs = route_per_device(monkeypatch, Path(__file__).parent / "stubs", files, {"workflow": graph, "vram_gb": 24})
    assert {dev: out["device"] for dev, out in outs.items()} == {"cpu": "cpu", "cuda": "cuda"}
    got = {dev: [(t["gb"], t["label"]) for t in out["tiers"]] for dev, out in outs.items()}
    assert got["cpu"] == got["cuda"]
    assert dict(got["cpu"])[8] == "fits"
