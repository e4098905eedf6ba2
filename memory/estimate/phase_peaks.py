"""Per-phase peaks of an estimate on a VRAM budget: weights, activations, allocator margin and fixed costs of each
phase as ComfyUI would run it (text encode, sample, VAE decode and encode), with the tiled retry ComfyUI makes when
a VAE phase runs out of memory. formula.estimate builds the estimate; verdict.py judges these phases."""
from . import sample_acts, sample_cache, side_models, te_device, te_loaded, vae as vae_mod, vae_resident, vae_untraced
from .phases import naive_total
from .spec import FRAGMENTATION
from ..errors import UserError


def peak_on(est: dict, budget) -> dict:
    """{phase: bytes} and the VAE figures of this estimate as ComfyUI would run it with `budget` bytes of VRAM
    (None: the whole batch decoded at once, untiled unless the policy says tiled). retry: {phase: breakdown} of
    the tiled retry ComfyUI makes when that phase runs out of memory (verdict.as_run decides whether it does);
    untiled: {phase: bytes} of a phase whose row is the retry already (vae.phase: one sample over the free memory)."""
    ctx = est["_ctx"]
    pol, w, fixed_total = ctx["policy"], ctx["w"], sum(est["fixed"].values())
    keep = ctx["keep"]
    others = lambda *ex: sum(v for k, v in (("te", w.get("te_stay", w["te"])), ("dm", w["dm"]), ("vae", w["vae"]), ("dm_rest", w.get("dm_rest", 0)))  # noqa: E731
                             if k not in ex) if keep else 0
    breakdown, phases, retry, untiled, untiled_bd = {}, {}, {}, {}, {}
    # the models a workflow's loaders load beside these (side_models.py: a ControlNet, a model patch, an audio encoder;
    # a CLIP vision file is a text encoder component already, listed only where the text encoders are on the device)
    side = [m for m in pol.get("side_models") or () if (m["how"] != "component" or w["te"]) and not te_device.off_card(pol, m)]
    if pol.get("text_encoders") == "cpu" and not te_device.host_cpu(pol):  # CLIPLoader's device applies to that CLIP only (nodes.py:966); a CLIP vision
        # model loads on text_encoder_device() (comfy/clip_vision.py:42,57), the GPU: its weights in text encode (rev63 #8)
        side += [dict(m, how="on_device") for m in pol.get("side_models") or () if m["how"] == "component"]

    # each sampler's own run where its tokens or batch differ from the estimate's (fix65: larger ones too): its
    # ControlNets' residuals at its tokens and batch (rev64 #3) and the diffusion model's activations at its size
    # (act65): ComfyUI runs one sampler at a time, each on its own noise shape (comfy/sampler_helpers.py:121), so the
    # sample phase is the sampler whose run holds the most (side_models.one_sampler); a sampler at the estimated size
    # (or not followed) is counted at the estimate's figures
    sizes = side_models.sampler_sizes(pol.get("control_sizes"), ctx["family"], ctx["width"], ctx["height"],
                                      ctx["frames"], ctx["batch"], est["latent"]["image_tokens"])
    sizes = sizes if sizes and ctx["has_dm"] else None  # no diffusion model: no sample phase
    tokens = [s and (s[2], sample_acts.in_model(ctx, s[3], s[4])) for s in sizes] if sizes else None
    own = [s and sample_acts.at(ctx, s[0], s[1], s[3], s[4]) for s in sizes] if sizes and len(sizes) > 1 else None
    own = own if own and any(own) else None  # exact mode's traced figure: every sampler at the estimated size's

    def phase(name, weights, acts, slack=0, per=None):
        # per: [the diffusion model's activations in this phase at each sampler's own size], None: acts for every one
        sw, sa, owners, at = side_models.phase_figures(side, name, keep, est["latent"], pol["compute_bytes"],
                                                       pol.get("control_samplers"), tokens, per)
        acts = per[at] if per and at is not None else acts
        weights, acts = weights + sw, acts + sa
        margin = int(FRAGMENTATION * acts) + int(slack)
        breakdown[name] = {"weights": int(weights), "activations": int(acts), "allocator_margin": margin, "fixed": fixed_total}
        if owners:  # each one's part of the phase's weights and activations (counted in them)
            breakdown[name]["side_models"] = owners
        if per and at is not None:  # the sampler whose run is the phase: control_feeds.latents' order, the size counted
            s = sizes[at] or (ctx["width"], ctx["height"], None, ctx["batch"])
            breakdown[name]["sampler"] = {"index": at, "size": list(s[:2]), "batch": s[3]}
            if len(s) > 4 and s[4]:  # its cfg is 1: no uncond in its run (sampler_cfg.py)
                breakdown[name]["sampler"]["cfg1"] = True
        phases[name] = int(weights + acts + margin + fixed_total)

    if ctx["has_te"]:
        phase("text_encode", w["te"] + others("te") + w["under"]["te"], ctx["te_act"] if w["te"] else 0)
    if ctx["has_dm"]:
        wd = w["dm"] + w["te_extra"] + others("dm") + w["under"]["dm"]
        # the dense mask is held whole beside the n^2 scores: added after naive_total, which keeps only part of act
        scores = lambda s: s["act"] if pol.get("attention") == "math" else (  # noqa: E731
            naive_total(s["act"] - s["mask"], s["naive"], ctx.get("arch")) + s["mask"])
        here = {"act": ctx["act"], "naive": ctx["naive"], "mask": ctx.get("mask", 0)}  # at the estimated size
        phase("sample", wd, ctx["act"], per=own and [(s or here)["act"] for s in own])
        phase("sample_naive_attention", wd, scores(here), per=own and [scores(s or here) for s in own])
        for k, naive in (("sample", pol.get("attention") == "math"), ("sample_naive_attention", True)):
            # reserved beyond the margin that the caching allocator keeps through sampling: peak_device only
            breakdown[k]["cached_slack"] = sample_cache.cached_slack_bytes(
                ctx["family"], breakdown[k]["activations"], naive) if sample_cache.applies(pol, ctx) else 0
    te_s = w_s = None  # the text encoders and sampling weights loaded while the sampler runs (te_loaded.py, est67)
    dm_s = 0  # what is left of an earlier sampler's diffusion model (Wan 2.2's high-noise expert: rev67e F1)
    if ctx["has_dm"] and budget is not None and est.get("comfyui_memory_required"):
        te_s, w_s, dm_s = te_loaded.at_sample(est, budget, breakdown["sample"]["weights"])
        for k in ("sample", "sample_naive_attention"):  # loaded beside it: peak_device counts it, the row does not
            breakdown[k]["te_kept"] = int(te_s)
            breakdown[k]["dm_kept"] = int(dm_s)
            if ctx.get("i2v_encode"):  # the VAE the start image's encode loaded (te_loaded.vae_at_sample, fix68d)
                breakdown[k]["vae_kept"] = int(te_loaded.vae_at_sample(est, budget, breakdown["sample"]["weights"]))
    if ctx.get("latent_upscale"):  # LTX-2's LTXVLatentUpsampler between the stages: its model alone (latent_upscale.py)
        u = ctx["latent_upscale"]
        phase("latent_upscale", u["weights"] + w["te_extra"] + others() + w["under"]["vae"], u["bytes"])
        breakdown["latent_upscale"]["comfyui_request"] = u["comfy_request"]  # what the node frees first: shown, not counted
    vinfo = None
    if ctx["has_vae_or_dm"]:
        wv = w["vae"] + w["te_extra"] + others("vae") + w["under"]["vae"]
        mode = pol["vae_decode"]
        dm_kept = te_kept = 0
        if ctx["has_dm"] and vae_resident.applies(pol, keep, budget, mode, w["under"]["vae"]):
            # what the sampler's load left (te_loaded.py: the text encoders the text encode left, est67), then the VAE's
            te_s, w_s = (0, w["dm"]) if te_s is None else (te_s, w_s)
            held = vae_resident.left(budget, est["fixed"]["cuda_context"], est["fixed"].get("comfyui_reserve", 0), wv,
                                     w["vae"], [("dm", min(w["dm"], w_s), w["dm"]),
                                                ("dm_before", dm_s, sum(w.get("dm_before", []))), ("te", te_s, w["te"])],
                                     vae_mod.comfy_decode_heuristic(ctx["vae_kind"], ctx["lat_shape"], ctx["vae_dtype"],
                                                                    pol.get("device", "cuda")))
            dm_kept, te_kept = held["dm"] + held["dm_before"], held["te"]
        # the diffusion model (and text encoders) ComfyUI leaves loaded beside the VAE (vae_resident.py, fix66a) size the
        # batch (the free memory VAE.decode reads), but are not the decode's need: ComfyUI unloads them as far as one
        # sample needs the room, so the rows (and the verdict) leave them out; the report says how much stays loaded
        free = None if budget is None else budget - est["fixed"]["cuda_context"] - wv - dm_kept - te_kept
        vinfo = vae_mod.phase(ctx["vae_kind"], ctx["lat_shape"], ctx["vae_dtype"], free, mode, pol.get("tile"),
                              pol.get("runner") or "comfyui", device=pol.get("device", "cuda"),
                              slicing=bool(pol.get("vae_slicing")), gpu_arch=pol.get("gpu_arch"),
                              tile_px=(vae_mod.DIFFUSERS_KL_TILE.get(ctx["family"]) or (pol.get("tile") or {}).get("tile"))
                              if pol.get("runner") == "diffusers" else None, vae_options=pol.get("vae_options"))
        if ctx.get("empty_cache"):  # accelerate empties the cache at every layer move: no reserved slack kept (nor in sampling)
            vinfo.update(allocator_slack=0, cached_slack=0)
        held = dm_kept + te_kept  # ComfyUI's tiled retry unloads nothing (comfy/sd.py:807-824): in its row (fix68g)
        phase("vae_decode", wv + (held if vinfo["fallback"] else 0), vinfo["bytes"], vinfo.get("allocator_slack", 0))
        breakdown["vae_decode"]["kept_in_row"] = bool(vinfo["fallback"] and held)  # verdict: not counted twice
        breakdown["vae_decode"]["dm_kept"] = int(dm_kept)  # loaded beside it, sizing its batch; not in its weights
        breakdown["vae_decode"]["te_kept"] = int(te_kept)  # the same of the text encoders (te_loaded.py)
        breakdown["vae_decode"]["conv_workspace"] = vinfo["conv_workspace"]  # part of its activations (CUDA only)
        breakdown["vae_decode"]["cached_slack"] = vinfo["cached_slack"]  # reserved beyond the margin: peak_device only
        if vinfo["tiled_bytes"] is not None:  # None: no pixel tiles (Hunyuan3D's ShapeVAE, hunyuan3d.decode_phase)
            phase("vae_decode_tiled", wv, vinfo["tiled_bytes"])
        if vae_mod.retries_tiled(pol.get("runner")) and mode == "auto" and vinfo["fallback_bytes"] is not None:
            if vinfo["fallback"]:  # taken already: the batch ComfyUI chose is over the free memory (vae.phase)
                per = vinfo["per_sample"] * vinfo.get("tried", 1)  # the untiled try: that batch at once, with the
                kept = wv + dm_kept + te_kept  # models still loaded beside it (what made it run out: fix66h)
                untiled["vae_decode"] = int(kept + per + int(FRAGMENTATION * per) + fixed_total)
                untiled_bd["vae_decode"] = _retry_phase(kept, per, fixed_total)  # its breakdown: the text's row (fix66a)
            elif not vinfo["tiled"] and not vae_untraced.formula_only(ctx["vae_kind"]):  # rev68g #2: not from a formula
                retry["vae_decode"] = dict(_retry_phase(wv + held, vinfo["fallback_bytes"], fixed_total), kept_in_row=bool(held))
        if ctx.get("i2v_encode"):  # the conditioning video through the VAE's encoder, with the decode's weights around it
            phase("vae_encode", wv, vae_mod.vae_encode_bytes(ctx["vae_kind"], ctx["i2v_encode"], ctx["vae_dtype"],
                                                             device=pol.get("device", "cuda")))
            breakdown["vae_encode"]["te_kept"] = int(te_loaded.at_encode(est, budget))  # beside it, not in its row
            if vae_mod.retries_tiled(pol.get("runner")):  # VAE.encode's tiled retry after an OOM
                retry["vae_encode"] = _retry_phase(wv, vae_mod.vae_encode_fallback_bytes(
                    ctx["vae_kind"], *ctx["i2v_encode"], ctx["vae_dtype"], device=pol.get("device", "cuda")), fixed_total)
    if pol.get("pixel_upscale"):  # ImageUpscaleWithModel after the decode: its model, the image, one tile (pixel_upscale.py)
        u = pol["pixel_upscale"]
        wu = u["weights"] + w["te_extra"] + others() + w["under"]["vae"]
        phase("pixel_upscale", wu, u["bytes"])
        breakdown["pixel_upscale"]["comfyui_request"] = u["comfy_request"]  # what the node frees first: shown, not counted
        free = None if budget is None else budget - sum(est["fixed"].values()) - wu
        if u["retry"]:  # its out-of-memory fallback: tile 256, then 128 (the first that fits, else the last)
            acts = next((a for a in u["retry"].values() if free is not None and a + int(FRAGMENTATION * a) <= free),
                        list(u["retry"].values())[-1])
            retry["pixel_upscale"] = _retry_phase(wu, acts, fixed_total)
    if ctx.get("audio"):  # LTX-2's LTXVAudioVAEDecode: its own model on the device, the whole batch at once (audio_decode.py)
        a = ctx["audio"]
        phase("audio_decode", a["weights"] + w["te_extra"] + others() + w["under"]["vae"], a["bytes"])
    if not phases:
        raise UserError("none of these files is a diffusion model, text encoder or VAE")
    if "vae_encode" in phases:  # in run order: after the encoders, before sampling
        order = ("text_encode", "vae_encode")
        phases = {k: phases[k] for k in sorted(phases, key=lambda k: order.index(k) if k in order else len(order))}
        breakdown = {k: breakdown[k] for k in phases}
    return {"phases": phases, "breakdown": breakdown, "vae": vinfo, "retry": retry, "untiled": untiled,
            "untiled_breakdown": untiled_bd}


def _retry_phase(weights, acts, fixed_total) -> dict:
    """A phase's breakdown when ComfyUI retries it tiled (as `phase` counts one)."""
    return {"weights": int(weights), "activations": int(acts), "allocator_margin": int(FRAGMENTATION * acts),
            "fixed": fixed_total}
