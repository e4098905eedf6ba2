"""est67: the estimate's open modelling items left by session 66 (review rev66d, issue 15), each derived by hand from
ComfyUI 0.8.0's source (comfy/model_management.py, comfy/sd.py, comfy/samplers.py)."""
from gpu_garden.memory.estimate import cfg_batch, comfy_load
from gpu_garden.memory.fit import plan as fit_plan

MiB, GiB = 1024 ** 2, 1024 ** 3


def _sample_est(device, weights, one_cond, reserve=400 * MiB, context=0):
    """The keys cfg_batch.free_at_sample reads: the sample phase's weights, ComfyUI's memory_required batched (two
    conds), the fixed costs and the --device."""
    return {"fixed": {"cuda_context": context, "comfyui_reserve": reserve}, "breakdown": {"sample": {"weights": weights}},
            "comfyui_memory_required": 2 * one_cond, "cfg": True, "policy": {"device": device}}


def test_free_at_sample_follows_min_weight_memory_ratio_on_rocm():
    """rev66d #5. A 10 GiB card (no context), reserve 400 MiB, 3 GiB of weights, one cond's memory_required 8 GiB.
    load_models_gpu (model_management.py:625-630,695): minimum = max(819.2 MiB + 400, 8192 + 400) = 8592 MiB;
    lowvram_model_memory = max(0, 10240 - 8592, min(10240 x ratio, 10240 - 819.2 - 400)).
    NVIDIA (ratio 0.0, :315): max(1648, 0) = 1648 MiB of the 3072 kept -> free 10240 - 1648 = 8592 MiB.
    ROCm (ratio 0.4, :313): max(1648, min(4096, 9020.8)) = 4096 >= 3072: the weights load whole -> free 7168 MiB.
    The old code took the NVIDIA figure on every device (8592 MiB on ROCm too)."""
    budget = 10 * GiB
    assert cfg_batch.free_at_sample(_sample_est("cuda", 3 * GiB, 8 * GiB), budget) == 8592 * MiB
    assert cfg_batch.free_at_sample(_sample_est(None, 3 * GiB, 8 * GiB), budget) == 8592 * MiB
    assert cfg_batch.free_at_sample(_sample_est("rocm", 3 * GiB, 8 * GiB), budget) == 7168 * MiB
    assert cfg_batch.free_at_sample(_sample_est("xpu", 3 * GiB, 8 * GiB), budget) == 7168 * MiB
    # MPS runs in SHARED vram state (:415-416): the lowvram branch (:691) is not taken, lowvram_model_memory stays 0 and
    # model_load(0) loads the whole model (:500-503): free 10240 - 3072 = 7168 MiB (rev67e F6; was the NVIDIA figure)
    assert cfg_batch.free_at_sample(_sample_est("mps", 3 * GiB, 8 * GiB), budget) == 7168 * MiB


def test_free_at_sample_whole_load_is_the_same_on_every_device():
    """Where the weights leave minimum_memory_required free, every device loads them whole: 16 GiB card, 5 GiB of
    weights, one cond 1 GiB: minimum max(1219.2, 1424) MiB; 16384 - 1424 = 14960 >= 5120 -> free 16384 - 5120 MiB."""
    for dev in ("cuda", "rocm"):
        assert cfg_batch.free_at_sample(_sample_est(dev, 5 * GiB, 1 * GiB), 16 * GiB) == 11264 * MiB


def test_fit_plan_keeps_its_names_from_the_one_copy():
    """fit/plan re-exports load_models_gpu's arithmetic from the estimate's module (one source): fit_guard and the
    tests read plan.MIN_WEIGHT_RATIO, plan.comfy_minimum and plan.comfy_weights_kept."""
    assert fit_plan.comfy_weights_kept is comfy_load.comfy_weights_kept
    assert fit_plan.comfy_minimum is comfy_load.comfy_minimum
    assert fit_plan.MIN_WEIGHT_RATIO == 0.0
    assert comfy_load.weight_ratio("rocm") == 0.4 and comfy_load.weight_ratio("cuda") == 0.0


# -- 2 (rev66d #4): the text encoders ComfyUI leaves loaded at sampling and decode ------------------------------------

def _sdxl(px, batch, gb, **policy):
    from gpu_garden.memory.estimate import families, formula, layouts

    comps = families.split_components(layouts.table("sdxl_sd_xl_base_1.0"), "sdxl_sd_xl_base_1.0")
    return formula.judge(formula.estimate(comps, px, px, batch=batch, policy=policy or None), gb * GiB)


# the inputs: the SDXL checkpoint's parts as loaded (fp16 CLIP-L + CLIP-G, U-Net, VAE in bf16), the CUDA context
# (450 MiB) and ComfyUI's Linux reserve (400 MiB); the rest below is ComfyUI's arithmetic by hand
TE, UNET, VAE_W, CTX, RES = 1635441258, 5134927368, 167307726, 450 * MiB, 400 * MiB
MIN_INF = int(0.8 * 1024 * MiB)  # minimum_inference_memory() less the reserve (model_management.py:581-582)


def test_unload_until_takes_a_partly_offloaded_model_first_then_the_smaller():
    """free_memory (model_management.py:584-619) sorts by (-offloaded memory, refcount, size, index) and unloads a model
    only as far as needed (:526-531, :597-603): free 500, ask 1200 -> 700 to free. Both whole: the smaller (te, 1500)
    gives 700 and keeps 800. The diffusion model partly offloaded (3000 of 4000): it goes first, 3000 -> 2300.
    Free already over the ask: nothing."""
    assert comfy_load.unload_until([("dm", 4000, 4000), ("te", 1500, 1500)], 500, 1200) == {"dm": 4000, "te": 800}
    assert comfy_load.unload_until([("dm", 3000, 4000), ("te", 1500, 1500)], 500, 1200) == {"dm": 2300, "te": 1500}
    assert comfy_load.unload_until([("dm", 4000, 4000), ("te", 500, 500)], 500, 1200) == {"dm": 3800, "te": 0}
    assert comfy_load.unload_until([("dm", 4000, 4000), ("te", 1500, 1500)], 1300, 1200) == {"dm": 4000, "te": 1500}


def test_sdxl_batch_8_on_12_gb_runs_the_conds_one_at_a_time_with_the_text_encoders_loaded():
    """rev66d #4's case, SDXL 1024 px batch 8 on 12 GiB. room = 12 GiB - 450 MiB = 12,413,042,688.
    CLIPTextEncode loads the CLIP with memory_required 0 (sd.py:269,302-304): room - (MIN_INF + 400 MiB) =
    11,134,618,829 >= 1,635,441,258: whole. ComfyUI's memory_required for the batched pair (sampler_helpers.py:121,
    model_base.py:378): 16 x 128 x 128 x 2 x 0.01 x 0.8 MiB = 4,398,046,511; one cond 2,199,023,255.
    load_models_gpu asks free_memory for int(1.1 x 5,134,927,368) + max(1,278,423,859, 4,398,046,511 + 419,430,400) =
    5,648,420,104 + 4,817,476,911 = 10,465,897,015 (:626,671-673); free is 12,413,042,688 - 1,635,441,258 =
    10,777,601,430, over it: the text encoders stay whole (:603). The U-Net loads whole (10,777,601,430 - (2,199,023,255
    + 419,430,400) >= 5,134,927,368), leaving 10,777,601,430 - 5,134,927,368 = 5,642,674,062 free. samplers.py:273:
    1.5 x 4,398,046,511 = 6,597,069,766 is not under it: one at a time. Old code (no text encoders): 7,278,115,320
    free, batched."""
    e = _sdxl(1024, 8, 12)
    w = e["_ctx"]["w"]
    assert (w["te"], w["dm"], e["fixed"]["cuda_context"], e["fixed"]["comfyui_reserve"]) == (TE, UNET, CTX, RES)
    cu = e["cond_uncond"]
    assert cu["memory_required_batched"] == 4398046511
    assert cu["batched"] is False and cu["te_kept"] == TE and cu["free_at_sample"] == 5642674062
    assert e["latent"]["batch_in_model"] == 8
    line = next(a for a in e["assumptions"] if a.startswith("cond and uncond one at a time"))
    assert "1.52 GiB of the text encoders still loaded from the text encode" in line


def test_sdxl_512_batch_8_on_12_gb_decodes_4_with_the_text_encoders_loaded():
    """SDXL 512 px batch 8 on 12 GiB: at sampling the ask is 5,648,420,104 + (1,099,511,627 + 419,430,400) =
    7,167,362,131 < 10,777,601,430 free: the text encoders stay whole, the U-Net whole, 5,642,674,062 free
    (1.5 x 1,099,511,627 under it: batched). VAE.decode (sd.py:793-800): memory_used_decode = 2178 x 64 x 64 x 64 x 2
    = 1,141,899,264 per sample; free_memory asks int(1.1 x 167,307,726) + 1,141,899,264 + 419,430,400 = 1,745,368,162,
    under the 5,642,674,062 free: nothing unloaded. After the VAE: 5,642,674,062 - 167,307,726 = 5,475,366,336 free,
    / 1,141,899,264 = 4.79: 4 of 8 at once. Old code (the text encoders unloaded): 7,110,807,594 / 1,141,899,264 = 6.
    The text encoders kept are shown, not counted in the decode's row (its weights are the VAE's alone)."""
    e = _sdxl(512, 8, 12)
    assert e["cond_uncond"]["batched"] is True and e["cond_uncond"]["te_kept"] == TE
    b = e["breakdown"]["vae_decode"]
    assert (b["dm_kept"], b["te_kept"]) == (UNET, TE)
    assert e["vae"]["comfy_per_sample"] == 1141899264 and e["vae"]["batch"] == 4
    assert b["weights"] == VAE_W
    line = next(a for a in e["assumptions"] if a.startswith("VAE decode:"))
    assert "with 4.78 GiB of the diffusion model and 1.52 GiB of the text encoders still loaded beside it" in line


def test_text_encoders_not_left_where_comfyui_does_not_leave_them():
    """--text-encoders cpu (CLIPLoader device cpu): never on the card; resident: counted in every phase already; MPS:
    text_encoder_device() is the CPU in SHARED vram state (model_management.py:875-884). None is kept then."""
    for pol in ({"text_encoders": "cpu"}, {"text_encoders": "resident"}):
        e = _sdxl(512, 8, 12, **pol)
        assert e["cond_uncond"]["te_kept"] == 0 and e["breakdown"]["vae_decode"]["te_kept"] == 0, pol
    e = _sdxl(512, 8, 12, device="mps")
    assert e.get("cond_uncond", {}).get("te_kept", 0) == 0 and e["breakdown"]["vae_decode"].get("te_kept", 0) == 0


# -- 3: the KL VAE's memory_used_decode x 2.73 on AMD (comfy/sd.py:314-320) ------------------------------------------

def test_kl_decode_heuristic_times_2_73_on_rocm_only():
    """sd.py:314-320: VAE_KL_MEM_RATIO 2.73 where model_management.is_amd() (torch.version.hip), in the default
    memory_used_decode = 2178 x h x w x 64 x dtype_size: a 64 x 64 bf16 latent 2178 x 64 x 64 x 64 x 2 = 1,141,899,264,
    x 2.73 = 3,117,384,990.72. The Wan 2.1 VAE's own lambda (sd.py:516) has no ratio: 2200 x 1 x 64 x 64 x 64 x 2."""
    from gpu_garden.memory.estimate import vae as V

    assert V.comfy_decode_heuristic("kl", [1, 4, 64, 64], "bf16") == 1141899264
    assert V.comfy_decode_heuristic("kl", [1, 4, 64, 64], "bf16", "cuda") == 1141899264
    assert V.comfy_decode_heuristic("kl", [1, 4, 64, 64], "bf16", "rocm") == 3117384990
    assert V.comfy_decode_heuristic("wan21", [1, 16, 1, 64, 64], "bf16", "rocm") == 2200 * 64 * 64 * 64 * 2


def test_sdxl_512_batch_8_on_12_gb_rocm_decodes_1_at_once():
    """The SDXL 512 px batch 8 case above with --device rocm: the loads at sampling are the same (MIN_WEIGHT_MEMORY_RATIO
    0.4 only raises what a partial load keeps, and the text encoders and the U-Net load whole here, as on CUDA), so
    5,642,674,062 is free before the VAE. VAE.decode asks free_memory for int(1.1 x 167,307,726) + 3,117,384,990 +
    419,430,400 = 3,720,853,888: nothing unloaded; 5,475,366,336 free after the VAE / 3,117,384,990.72 = 1.76: 1 of 8
    at once (4 on CUDA). Our activation figure is the measured one, not ComfyUI's x 2.73."""
    from gpu_garden.memory.estimate import vae as V

    e = _sdxl(512, 8, 12, device="rocm")
    b = e["breakdown"]["vae_decode"]
    assert (b["dm_kept"], b["te_kept"]) == (UNET, TE)
    assert e["vae"]["comfy_per_sample"] == 3117384990 and e["vae"]["batch"] == 1
    assert e["vae"]["per_sample"] == V.vae_decode_bytes("kl", [1, 4, 64, 64], "bf16", device="rocm")
    assert b["activations"] == e["vae"]["per_sample"]


def test_sdxl_1024_on_8_gb_rocm_vae_load_unloads_every_model():
    """SDXL 1024 px batch 1 on 8 GiB, --device rocm: memory_used_decode 2178 x 128 x 128 x 64 x 2 x 2.73 =
    12,469,539,962.88, so the VAE's load asks free_memory for 184,038,498 + 12,469,539,962 + 419,430,400 bytes, more
    than the card (8 GiB - 450 MiB = 8,118,075,392): it unloads the U-Net and the text encoders whole (:597-603, no
    break while free <= the ask). On CUDA (4,567,597,056 per sample) part of the U-Net stays."""
    e = _sdxl(1024, 1, 8, device="rocm")
    b = e["breakdown"]["vae_decode"]
    assert (b["dm_kept"], b["te_kept"]) == (0, 0) and e["vae"]["comfy_per_sample"] == 12469539962
    assert _sdxl(1024, 1, 8)["breakdown"]["vae_decode"]["dm_kept"] > 0


# -- 4: peak_device (what nvidia-smi shows) counts what ComfyUI left loaded beside a phase ----------------------------

def test_peak_device_counts_the_models_left_loaded_the_peak_does_not():
    """SDXL 512 px batch 8 on 12 GiB (above): while the decode runs the U-Net (5,134,927,368) and the text encoders
    (1,635,441,258) are still on the card beside the VAE, and the text encoders beside the U-Net while it samples.
    nvidia-smi shows them (docs/estimate.md: peak_device is what nvidia-smi would show), so peak_device = the largest
    of each phase's weights + activations + margin + cached slack + what is left beside it, + the CUDA context (450 MiB);
    peak and the verdict stay on the rows (ComfyUI would unload them as far as its own figures ask).
    Old code: the rows alone."""
    from gpu_garden.memory.estimate import verdict

    e = _sdxl(512, 8, 12)
    bd = e["breakdown"]
    assert bd["vae_decode"]["dm_kept"] == UNET and bd["vae_decode"]["te_kept"] == TE and bd["sample"]["te_kept"] == TE
    row = {k: bd[k]["weights"] + bd[k]["activations"] + bd[k]["allocator_margin"] + bd[k].get("cached_slack", 0)
           for k in ("text_encode", "sample", "vae_decode")}
    assert e["peak_device"] == max(row["text_encode"], row["sample"] + TE, row["vae_decode"] + UNET + TE) + CTX
    assert e["peak_device"] > max(row.values()) + CTX
    assert not e["tiled_retry"] and e["peak"] == max(v for k, v in e["phases"].items() if k in verdict.MAIN)
    assert e["verdict"] == ("fits" if e["peak"] <= 0.9 * 12 * GiB else "tight")


def test_peak_torch_counts_the_models_left_loaded_too():
    """aud67a F1: the U-Net and text encoders ComfyUI leaves on the card are allocated tensors, so
    torch.cuda.max_memory_allocated (peak_torch) counts them as nvidia-smi does: SDXL 512 px batch 8 on 12 GiB,
    peak_torch = the largest of each phase's weights + activations + what is left beside it (no margin, no context).
    Old code: weights + activations of the rows alone (the U-Net's 4.78 GiB and the text encoders' 1.52 GiB missing)."""
    e = _sdxl(512, 8, 12)
    bd = e["breakdown"]
    row = {k: bd[k]["weights"] + bd[k]["activations"] for k in ("text_encode", "sample", "vae_decode")}
    assert e["peak_torch"] == max(row["text_encode"], row["sample"] + TE, row["vae_decode"] + UNET + TE)
    assert e["peak_torch"] > max(row.values())
    assert e["peak_torch"] < e["peak_device"]
