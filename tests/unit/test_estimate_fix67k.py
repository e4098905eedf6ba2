"""fix67k: review rev67e's findings on the est67 merge (issue 15), each figure derived by hand from ComfyUI 0.8.0's
source (/work/hostenv/ComfyUI: comfy/model_management.py, comfy/sd.py) or from the recorder's own reading."""
from gpu_garden.nodes import estimate_measured

MiB, GiB = 1024 ** 2, 1024 ** 3


# -- F3: the "measured here" comparison counts the text encoders left loaded beside the sampler --------------------------

def test_formula_figure_counts_the_text_encoders_left_beside_the_sampler():
    """The recorder reads torch.cuda.max_memory_allocated after reset_peak_memory_stats (nodes/recorder_meter.py
    take_peaks) while the sampler runs: every live tensor, so the text encoders ComfyUI's text encode left on the card
    (model_management.py:621-707 unloads them only as far as the sampler's load asks) are in it. A sample phase of
    4096 MiB of weights, 1024 MiB of activations, 1536 MiB of text encoders kept, a 51.2 MiB margin, a 450 MiB context:
    peak_torch 4096 + 1024 + 1536 = 6656 MiB; peak_device adds the margin and the context: 6656 + 51.2 + 450 MiB.
    The old figure left the 1536 MiB out (5120 MiB)."""
    est = {"breakdown": {"sample": {"weights": 4096 * MiB, "activations": 1024 * MiB, "te_kept": 1536 * MiB,
                                    "allocator_margin": int(51.2 * MiB)}},
           "fixed": {"cuda_context": 450 * MiB}}
    assert estimate_measured.formula_figure(est, "peak_torch") == 6656 * MiB
    assert estimate_measured.formula_figure(est, "peak_device") == 6656 * MiB + int(51.2 * MiB) + 450 * MiB
    est["breakdown"]["sample"].pop("te_kept")  # an estimate without it (a cpu run, an older one) is as before
    assert estimate_measured.formula_figure(est, "peak_torch") == 5120 * MiB
    # F1: an earlier sampler's diffusion model left beside this one (breakdown.sample.dm_kept) is live tensors too
    est["breakdown"]["sample"]["dm_kept"] = 2048 * MiB
    assert estimate_measured.formula_figure(est, "peak_torch") == 7168 * MiB


# -- F6: MPS loads whole -------------------------------------------------------------------------------------------------

def test_mps_loads_the_whole_model_where_cuda_loads_part():
    """--device mps: ComfyUI runs VRAMState.SHARED (model_management.py:415-416), and load_models_gpu takes the partial
    load branch only in LOW_VRAM / NORMAL_VRAM (:691): lowvram_model_memory stays 0, model_load(0) loads whole
    (:500-503). A 10 GiB card, no context, reserve 400 MiB, 3 GiB of weights, one cond's memory_required 8 GiB:
    minimum = max(819.2 + 400, 8192 + 400) = 8592 MiB; NVIDIA keeps max(0, 10240 - 8592, min(0, ...)) = 1648 MiB,
    MPS all 3072 MiB -> free 10240 - 3072 = 7168 MiB (the old code: 8592 MiB, NVIDIA's)."""
    from gpu_garden.memory.estimate import cfg_batch, comfy_load

    assert comfy_load.comfy_weights_kept(3 * GiB, 10 * GiB, 8 * GiB, 400 * MiB, comfy_load.weight_ratio("cuda")) == 1648 * MiB
    assert comfy_load.comfy_weights_kept(3 * GiB, 10 * GiB, 8 * GiB, 400 * MiB, comfy_load.weight_ratio("mps")) == 3 * GiB
    est = {"fixed": {"cuda_context": 0, "comfyui_reserve": 400 * MiB}, "breakdown": {"sample": {"weights": 3 * GiB}},
           "comfyui_memory_required": 16 * GiB, "cfg": True, "policy": {"device": "mps"}}
    assert cfg_batch.free_at_sample(est, 10 * GiB) == 7168 * MiB


def test_fit_plan_on_mps_keeps_the_whole_model():
    """Fit to Card's plan with the VAE on mps (its decode device), 6 GiB of weights on the same card: all 6144 MiB kept,
    nothing offloaded, though the live MIN_WEIGHT_MEMORY_RATIO is 0.4 there (not NVIDIA: :313), which the old plan
    read as a partial load of max(1648, min(0.4 x 10240, 10240 - 819.2 - 400)) = 4096 MiB; on cuda (ratio 0.0)
    max(1648, min(0, ...)) = 1648 MiB kept."""
    from gpu_garden.memory.fit import plan as fit_plan

    def run(dev, ratio):
        return fit_plan.plan(10 * GiB, weights={"diffusion_model": 6 * GiB}, memory_required=8 * GiB, reserve=400 * MiB,
                             decode={"kind": "kl", "latent_shape": [1, 4, 64, 64], "dtype": "fp16", "device": dev},
                             min_weight_ratio=ratio)

    assert run("mps", 0.4)["weights_on_gpu"] == 6 * GiB and run("mps", 0.4)["weights_offloaded"] == 0
    assert run("cuda", 0.0)["weights_on_gpu"] == 1648 * MiB


# -- F7: the peak line names the phase of peak_torch / peak_device where it is not the peak's ----------------------------

def _cli(capsys, *args):
    from gpu_garden.memory import cli

    rc = cli.main(["estimate", *map(str, args)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def test_peak_line_names_the_phase_torch_and_smi_peak_in(capsys):
    """HunyuanVideo on 48 GiB (rev67e r7): the peak row is sample, but at the decode ComfyUI still holds the diffusion
    model (VAE.decode's free_memory unloads it only as far as one sample asks: model_management.py:584-619), so
    max_memory_allocated and nvidia-smi peak there. Their phase is in the JSON and the text names it: the old line read
    "peak 25.71 GiB in sample (torch max_memory_allocated ~ 36.61 GiB, nvidia-smi ~ 37.65 GiB)" as if all were sample's."""
    import json

    d = json.loads(_cli(capsys, "hunyuan-video", "--vram", 48, "--ram", 128, "--json"))
    bd = d["breakdown"]["vae_decode"]
    assert d["peak_phase"] == "sample"
    assert d["peak_torch_phase"] == d["peak_device_phase"] == "vae_decode"
    assert d["peak_torch"] == bd["weights"] + bd["activations"] + bd["dm_kept"] + bd["te_kept"] > d["peak"]
    text = " ".join(_cli(capsys, "hunyuan-video", "--vram", 48, "--ram", 128).split())
    assert "GiB in VAE decode, nvidia-smi ~ " in text and text.count("in VAE decode)") == 1
    # where they peak in the peak's own phase the line is as before (SDXL on 12 GiB: all three in sample)
    text = " ".join(_cli(capsys, "sdxl", "--vram", 12, "--ram", 32).split())
    assert " in sample (torch max_memory_allocated ~ " in text and "GiB in sample," not in text


# -- F2: the text encoders are on the CPU where ComfyUI's text_encoder_device() is ---------------------------------------

# SDXL's parts as loaded (est67's test: U-Net fp16 bytes), the CUDA context 450 MiB; ComfyUI's arithmetic by hand below
UNET, CTX = 5134927368, 450 * MiB


def _sdxl(gb, **policy):
    from gpu_garden.memory.estimate import families, formula, layouts

    comps = families.split_components(layouts.table("sdxl_sd_xl_base_1.0"), "sdxl_sd_xl_base_1.0")
    return formula.judge(formula.estimate(comps, 1024, 1024, policy=policy), gb * GiB)


def test_no_text_encoders_kept_where_comfyui_loads_them_on_the_cpu():
    """text_encoder_device() (model_management.py:875-884) is the CPU where should_use_fp16(prioritize_performance=
    False) is False: a Pascal card (--gpu-halves none) on Linux (:1397-1403 returns False off Windows; :1416 major < 7
    False for the rest). So nothing of the CLIP is on the card at sampling: SDXL 1024 px on 8 GiB, the U-Net loads whole
    (8192 - 450 MiB free, minimum max(819.2 + 400, 262.1 + 400) MiB, 7742 - 1219.2 MiB > 4897 MiB of weights) and
    get_free_memory is 8192 MiB - 450 MiB - 5134927368 B = 2983148024 B. The old code kept 1.11 GiB of text encoders
    there (free 1791916595 B). On Windows a GeForce 10 card gets fp16 (:1400), so they stay; the node's live answer
    (policy te_on_device: text_encoder_device() == get_torch_device()) wins over the card's guess."""
    e = _sdxl(8, gpu_halves=(), platform="linux")
    assert e["breakdown"]["sample"]["te_kept"] == 0
    assert e["cond_uncond"]["free_at_sample"] == 8 * GiB - CTX - UNET == 2983148024
    assert _sdxl(8, gpu_halves=(), platform="windows")["breakdown"]["sample"]["te_kept"] > 0
    assert _sdxl(8, platform="linux")["breakdown"]["sample"]["te_kept"] > 0
    assert _sdxl(8, platform="linux", te_on_device=False)["breakdown"]["sample"]["te_kept"] == 0  # --lowvram, GTX 16xx
    assert _sdxl(8, gpu_halves=(), platform="linux", te_on_device=True)["breakdown"]["sample"]["te_kept"] > 0  # --gpu-only


def test_node_host_policy_passes_where_the_text_encoders_load(monkeypatch):
    """The node's host policy carries text_encoder_device() == get_torch_device() from ComfyUI's model management
    (host_models.text_encoders_on_device; nodes/estimate.host_policy needs comfy_api: the host tier runs it)."""
    import importlib
    import sys
    import types

    host_models = importlib.import_module("gpu_garden.nodes.host_models")
    mm = types.ModuleType("comfy.model_management")
    mm.text_encoder_device, mm.get_torch_device = (lambda: "cpu"), (lambda: "cuda:0")
    monkeypatch.setitem(sys.modules, "comfy", sys.modules.get("comfy") or types.ModuleType("comfy"))
    monkeypatch.setitem(sys.modules, "comfy.model_management", mm)
    assert host_models.text_encoders_on_device() is False
    mm.text_encoder_device = lambda: "cuda:0"
    assert host_models.text_encoders_on_device() is True


# -- F4: HunyuanImage 2.1's 64-channel VAE has its own ComfyUI figure, no AMD ratio --------------------------------------

def _hunyuan_image(device):
    """rev67e r1's model: HunyuanVideo's DiT table with HunyuanImage 2.1's 4-D patch embedding (families: hunyuan-image)
    and the FLUX AE's table with decoder.conv_in's 64 input channels (HunyuanImage 2.1's VAE), 2048 px on 24 GiB."""
    from gpu_garden.memory.estimate import families, formula, layouts

    hv = dict(layouts.table("hunyuan_video_hunyuan_video_t2v_720p_bf16"))
    hv["img_in.proj.weight"] = ("BF16", (3072, 64, 1, 1))
    ae = dict(layouts.table("vae_flux_ae"))
    ae["decoder.conv_in.weight"] = ("F32", (512, 64, 3, 3))
    comps = families.split_components(hv, "hy_image_dit") + families.split_components(ae, "hy_image_vae")
    return formula.judge(formula.estimate(comps, 2048, 2048, policy={"device": device}), 24 * GiB)


def test_hunyuan_image_vae_sized_as_comfyui_sizes_it_on_every_device():
    """comfy/sd.py:380-391: a VAE whose decoder.conv_in has 64 input channels is HunyuanImage 2.1's: downscale 32,
    working_dtypes fp16 first, memory_used_decode = 700 x h x w x 32 x 32 x dtype_size, with no VAE_KL_MEM_RATIO (the
    2.73 of :314-320 lives only in the default KL lambdas set after that branch). 2048 px: latent [1, 64, 64, 64];
    700 x 64 x 64 x 1024 x 2 (fp16) = 5872025600 B per sample, on CUDA and on ROCm alike. The old code took it for the
    KL VAE: 2178 x 64 x 64 x 64 x 2 = 1141899264 B, and x 2.73 = 3117384990 B on ROCm."""
    from gpu_garden.memory.estimate import families, spec

    assert spec.vae_kind_for("kl-64ch", "hunyuan-image") == "kl-64ch"
    assert spec.vae_kind_for(None, "hunyuan-image") == "kl-64ch"
    assert spec.vae_kind_for("kl-f8-16ch", "flux1") == "kl"
    for dev in ("cuda", "rocm"):
        e = _hunyuan_image(dev)
        assert e["latent"]["shape"] == [1, 64, 64, 64]
        assert e["vae"]["dtype"] == "fp16"
        assert e["vae"]["comfy_per_sample"] == 700 * 64 * 64 * 32 * 32 * 2 == 5872025600


# -- F1: a second sampler's load unloads the text encoders (and part of the first expert) --------------------------------

# Wan 2.2 14B i2v on 80 GiB (rev67e r5): each expert 28577802368 B, umt5-xxl fp16 11361820672 B, CUDA context 471859200,
# reserve 419430400, ComfyUI's memory_required batched 29225880069 (one cond 14612940034)
W14, TE14, CTX14, RES14, REQ2, REQ1 = 28577802368, 11361820672, 471859200, 419430400, 29225880069, 14612940034


def test_second_expert_load_unloads_the_text_encoders_then_part_of_the_first():
    """By hand from model_management.py:581-582,584-619,626,671-673,695. room = 80 GiB - context = 85427486720.
    Text encode: minimum 0.8 GiB + reserve = 1278423859; room - that > TE: whole, free 74065666048.
    High-noise sampler: free_memory(int(1.1 x W) + REQ2 + reserve = 31435582604 + 29645310469 = 61080893073): free is
    over it, nothing unloaded; free - (REQ1 + reserve) = 59033295614 > W: whole, free 45487863680.
    Low-noise sampler: the same ask; 15593029393 short; free_memory takes the smaller first (both fully loaded): the text
    encoders, all 11361820672 (free 56849684352), then 4231208721 of the high expert (left 24346593647, 22.67 GiB);
    free 61080893073 - (REQ1 + reserve) > W: whole. Free at sampling 85427486720 - 28577802368 - 24346593647 =
    32503090705 (30.27 GiB): 1.5 x REQ2 = 43838820103 is over it, cond and uncond one at a time (samplers.py:273).
    The old code kept the 10.58 GiB of text encoders and no first expert: free 45487863680 (42.36 GiB), batched.
    Through the estimate (te_loaded.at_sample) the batched figure is twice one cond's, 29225880068: the ask and so the
    high expert's share come out 1 B apart (24346593648 left, free 32503090704)."""
    from gpu_garden.memory.estimate import cfg_batch, comfy_load

    assert comfy_load.sample_loads(80 * GiB - CTX14, TE14, [W14, W14], REQ2, REQ1, RES14) == (0, W14, 24346593647)
    est = {"fixed": {"cuda_context": CTX14, "comfyui_reserve": RES14}, "breakdown": {"sample": {"weights": W14}},
           "comfyui_memory_required": REQ2, "cfg": True, "policy": {"device": "cuda"},
           "_ctx": {"has_te": True, "policy": {}, "keep": False, "w": {"te": TE14, "dm_before": [W14]}}}
    assert cfg_batch.free_at_sample(est, 80 * GiB) == 32503090704
    assert cfg_batch.batched_on(est, 80 * GiB)[0] is False


def test_two_experts_both_counted_beside_the_sampler_and_the_decode():
    """Two Wan 2.1 1.3B models (2837993600 B each) as high/low experts, umt5-xxl, 832x480x81 on 24 GiB: the second
    load's ask (1.1 x 2.84 GB + memory_required + reserve, under 8 GB) is under the 11.1 GB free after the first
    expert and the text encoders, so nothing is unloaded: beside the sampler the first expert whole (sample dm_kept
    2837993600) and the text encoders whole; the VAE's small ask leaves both experts at the decode (dm_kept 2 x
    2837993600). The old code had no first expert beside the sampler and one at the decode."""
    from gpu_garden.memory.estimate import families, formula, layouts

    comps = []
    for n in ("wan_wan2.1_t2v_1.3B_fp16", "wan_wan2.1_t2v_1.3B_fp16", "te_umt5_xxl_fp16", "vae_wan_2.1_vae"):
        comps += families.split_components(layouts.table(n), n)
    e = formula.judge(formula.estimate(comps, 832, 480, frames=81), 24 * GiB)
    s, v = e["breakdown"]["sample"], e["breakdown"]["vae_decode"]
    assert (s["weights"], s["dm_kept"], s["te_kept"]) == (2837993600, 2837993600, 11361820672)
    assert v["dm_kept"] == 2 * 2837993600
    assert e["peak_torch"] >= s["weights"] + s["activations"] + s["dm_kept"] + s["te_kept"]


# -- F5: one rule for the text encoders beside the sampler: host RAM and Fit to Card read the estimate's ------------------

def test_host_ram_counts_the_part_of_the_text_encoders_the_sampler_load_unloaded():
    """FLUX.1-dev fp8 (11904493696 B) + CLIP-L (246120960) + T5 fp16 (9524621312) + AE (167639366), 1024 px on 24 GiB,
    CUDA context 471859200, reserve 419430400, ComfyUI's memory_required batched 2130303778 (est["comfyui_memory_required"]).
    room 25297944576; the text encoders (9770742272) load whole, free 15527202304; the sampler's free_memory asks
    int(1.1 x 11904493696) + 2130303778 + 419430400 = 15644677243 (model_management.py:626,671-673): 117474939 B of
    the text encoders are unloaded, 9653267333 stay. Host RAM keeps for reload what is not on the card: the AE and
    those 117474939 B = 285114305. The old host_ram rule (stays_beside: all or nothing) kept all of them on the card
    (167639366, the AE alone) while te_kept said 9653267333."""
    from gpu_garden.memory.estimate import families, formula, layouts

    comps = []
    for n in ("flux_flux1-dev", "te_clip_l", "te_t5xxl_fp16", "vae_flux_ae"):
        comps += families.split_components(layouts.table(n), n)
    e = formula.judge(formula.estimate(comps, 1024, 1024, policy={"weights_dtype": "fp8"}), 24 * GiB)
    assert e["comfyui_memory_required"] == 2130303778
    assert e["breakdown"]["sample"]["te_kept"] == 9653267333
    assert e["host_ram"]["kept_for_reload"] == 167639366 + 117474939 == 285114305


def test_fit_plan_unloads_the_text_encoders_only_as_far_as_the_sampler_load_asks():
    """Fit to Card's plan on 12 GiB, no context, reserve 400 MiB: 6 GiB of diffusion model, 4 GiB of text encoders,
    memory_required 1 GiB (ours, for both of load_models_gpu's figures). Text encode: whole (4096 MiB), free 8192 MiB.
    The sampler's free_memory asks int(1.1 x 6144 MiB) + max(819.2 + 400, 1024 + 400) MiB = 6758.4 + 1424 MiB =
    8182.4 MiB (rounded down to bytes): under the 8192 MiB free, so nothing is unloaded; the weights load whole
    (8192 - 1424 > 6144). The old plan (stays_beside: 6144 + 4096 + 1424 > 12288) took them all off."""
    from gpu_garden.memory.fit import plan as fit_plan

    p = fit_plan.plan(12 * GiB, weights={"diffusion_model": 6 * GiB, "text_encoders": 4 * GiB}, memory_required=1 * GiB,
                      reserve=400 * MiB)
    assert p["text_encoders_off"] is False and p["weights_on_gpu"] == 6 * GiB
    assert p["peak"]["sample"] == 4 * GiB + 6 * GiB + 1 * GiB
    # 1 GiB less card: ask 8182.4 MiB, free 7168 MiB: 1014.4 MiB of them unloaded (partially: :526-531), 3081.6 MiB stay
    p = fit_plan.plan(11 * GiB, weights={"diffusion_model": 6 * GiB, "text_encoders": 4 * GiB}, memory_required=1 * GiB,
                      reserve=400 * MiB)
    assert p["text_encoders_off"] is True and p["steps"][0]["saving"] == int(1.1 * 6 * GiB) + 1424 * MiB - 7168 * MiB


def test_fit_plan_on_a_cpu_host_plans_the_budget_as_a_card():
    """The Fit to Card node on a ComfyUI started with --cpu: its budget stands for a card and is planned as on a GPU (as
    the estimate route's tiers are), not as the CPU's whole load; with whole loads there was no partial offload and no
    block-swap offer (tests/web/test_fit_to_card.py failed 3 tests on the --cpu test host). Same case as above: 6 GiB of
    weights on 10 GiB, one cond 8 GiB -> 1648 MiB kept on cpu as on cuda (ratio 0.0); mps still keeps all 6144 MiB."""
    from gpu_garden.memory.fit import plan as fit_plan

    def run(dev):
        return fit_plan.plan(10 * GiB, weights={"diffusion_model": 6 * GiB}, memory_required=8 * GiB, reserve=400 * MiB,
                             decode={"kind": "kl", "latent_shape": [1, 4, 64, 64], "dtype": "fp16", "device": dev},
                             min_weight_ratio=0.0)["weights_on_gpu"]

    assert run("cpu") == run("cuda") == 1648 * MiB
    assert run("mps") == 6 * GiB
