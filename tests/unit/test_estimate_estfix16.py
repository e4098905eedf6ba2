"""Audit 15 fixes (task estfix16): Dynamic VRAM's verdict agrees with host RAM's, --write records the RAM its tiers
assumed, bad input is refused, FLUX.1's T5 tokens as ComfyUI pads them, and --device cpu in ComfyUI's fp32."""
import json

import pytest

from gpu_garden.memory.estimate import layouts
from gpu_garden.memory.units import GiB
from support.cli_run import estimate, unwrap


@pytest.fixture(scope="module")
def flux(tmp_path_factory):
    d = tmp_path_factory.mktemp("flux")
    return [str(layouts.write_sparse(n, d / f"{n}.safetensors")) for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")]


def test_dynamic_vram_verdict_agrees_with_host_ram(flux, capsys):
    """Audit 15 X1. FLUX.1-dev + T5-XXL + CLIP-L + ae at 1024² on 12 GiB, Dynamic VRAM on, anonymous CPU copy: the run
    keeps 45958633189 B in RAM (test_estimate_fixups3 has the sum). Streamed weights are copied from the running
    model's CPU copy into pinned buffers (comfy/ops.py cast_bias_weight_with_vbar -> comfy/pinned_memory.py), so on
    32 GiB RAM is short by 45958633189 - 34359738368 = 11598894821 B (10.80 GiB): the run does not fit (exit 1), and
    Dynamic VRAM's own line and JSON verdict say so, keeping "fits, streaming" as the VRAM side only."""
    argv = (*flux, "--width", "1024", "--height", "1024", "--vram", "12", "--dynamic-vram", "on", "--weights-mmap", "off")
    rc, out, _ = estimate(capsys, *argv, "--ram", "32", "--json")
    j = json.loads(out)
    d = j["dynamic_vram"]
    assert rc == 1 and j["verdict"] == "does not fit" and j["outcome"]["status"] == "does not fit"
    assert d["host_ram_short_by"] == 11598894821
    assert d["verdict"].startswith("does not fit: host RAM short by 10.80 GiB (the run needs 42.80 GiB of it, 32.00 GiB "
                                   "available); in VRAM alone it fits, streaming 11.38 GiB")
    assert d["vram_verdict"].startswith("fits, streaming 11.38 GiB")
    assert "host RAM short by 10.80 GiB" in j["outcome"]["reason"]
    rc2, text, _ = estimate(capsys, *argv, "--ram", "32")
    line = next(x for x in unwrap(text).splitlines() if x.startswith("Dynamic VRAM ("))
    assert rc2 == 1 and line == f"Dynamic VRAM (--dynamic-vram on): {d['verdict']}"  # the same words as the JSON
    rc, out, _ = estimate(capsys, *argv, "--ram", "64", "--json")  # 45958633189 <= 0.85 x 64 GiB: fits
    j = json.loads(out)
    assert rc == 0 and j["verdict"] == "fits with streaming" and j["dynamic_vram"]["verdict"].startswith("fits, streaming")
    assert j["dynamic_vram"]["host_ram_short_by"] is None


@pytest.mark.parametrize("argv, says", [
    (("--text-tokens", "-1"), "--text-tokens needs 0"),
    (("--text-tokens", "-100000"), "--text-tokens needs 0"),
    (("--ram", "0"), "--ram needs a positive number of GiB"),
    (("--ram", "-1"), "--ram needs a positive number of GiB"),
    (("--reserve-vram", "-1"), "--reserve-vram needs 0 or more GiB"),
    (("--write", "OUT"), "--write adds extra.gpu_garden.memory to a workflow: give --workflow"),
    (("--cfg", "--cond-uncond", "separate"), "--cfg contradicts --cond-uncond separate"),
    (("--no-cfg", "--cond-uncond", "batched"), "--no-cfg contradicts --cond-uncond batched"),
])
def test_bad_input_is_refused(flux, tmp_path, capsys, argv, says):
    """Audit 15 C1-C3: each was taken silently (negative tokens gave negative activations, --ram 0 this machine's RAM,
    --write without --workflow exit 0 and no file, --cfg lost to --cond-uncond separate). Now a one-line usage error."""
    argv = tuple(str(tmp_path / "out.json") if a == "OUT" else a for a in argv)
    rc, out, err = estimate(capsys, flux[0], "--vram", "24", "--dynamic-vram", "off", *argv)
    assert rc == 2 and out == "" and says in err
    assert not (tmp_path / "out.json").exists()


def test_agreeing_switches_and_zero_reserve_are_taken(flux, capsys):
    for argv in (("--cfg", "--cond-uncond", "batched"), ("--no-cfg", "--cond-uncond", "separate"), ("--reserve-vram", "0"),
                 ("--text-tokens", "0")):
        rc, out, _ = estimate(capsys, flux[0], "--vram", "40", "--ram", "64", "--dynamic-vram", "off", *argv, "--json")
        assert rc == 0 and json.loads(out)["verdict"] == "fits", argv


def test_workflow_with_model_files_is_refused(flux, tmp_path, capsys):
    wf = tmp_path / "wf.json"
    wf.write_text(json.dumps({"1": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512, "batch_size": 1}}}))
    rc, out, err = estimate(capsys, flux[0], "--workflow", str(wf), "--models-dir", str(tmp_path), "--vram", "24")
    assert rc == 2 and out == "" and "give the workflow or model files, not both" in err


def test_library_refuses_negative_tokens_and_reserve(flux):
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.estimate import formula as E
    comps = E.from_files(flux[:1])
    for pol in ({"text_tokens": -5}, {"text_tokens": 1.5}, {"reserve": -1}):
        with pytest.raises(UserError):
            E.estimate(comps, 1024, 1024, cfg=False, policy=dict(pol, dynamic_vram="off"))


def test_flux1_text_tokens_follow_the_runner(flux):
    """Audit 15 item 4. ComfyUI 0.8.0's FLUX T5XXLTokenizer pads to min_length=256, pad_to_max_length=False
    (comfy/text_encoders/flux.py l.15): the sampler gets 4096 image tokens (1024² / 8 / 2, squared) + 256. diffusers'
    FluxPipeline pads to max_sequence_length=512 (padding="max_length"): 4096 + 512. The sample activations at 1024²,
    batch 1, bf16: 14.06 x 3072 x tokens x 2 + tokens x 128 x 8 (rope, fp32) + 262144 latent elements x (24 + 8)
    (sampler state) = 388791009 B for 4352 tokens, 414981365 B for 4608: the FIT trace's 388893194 B (its context is
    256 tokens, memory/trace/comfy_checkout.py) within 0.03 %."""
    from gpu_garden.memory.estimate import formula as E
    comps = E.from_files(flux[:1])
    want = {"comfyui": (256, 4352), "diffusers": (512, 4608)}
    for runner, (txt, n) in want.items():
        e = E.estimate(comps, 1024, 1024, cfg=False, policy={"runner": runner, "dynamic_vram": "off"})
        assert (e["latent"]["image_tokens"], e["latent"]["text_tokens"]) == (4096, txt), runner
        assert e["breakdown"]["sample"]["activations"] == int(14.06 * 3072 * n * 2) + n * 128 * 8 + 262144 * 32, runner
    e = E.estimate(comps, 1024, 1024, cfg=False, policy={"runner": "diffusers", "text_tokens": 300, "dynamic_vram": "off"})
    assert e["latent"]["text_tokens"] == 300  # --text-tokens wins under either runner
    # the code's ComfyUI figure against the FIT trace's measured 388893194 B (review16c R10: was two literals)
    e = E.estimate(comps, 1024, 1024, cfg=False, policy={"runner": "comfyui", "dynamic_vram": "off"})
    assert abs(e["breakdown"]["sample"]["activations"] / 388893194 - 1) < 0.0003


@pytest.fixture(scope="module")
def sd15(tmp_path_factory):
    return str(layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", tmp_path_factory.mktemp("sd") / "sd15.safetensors"))


def test_device_cpu_runs_as_comfyui_on_a_cpu(sd15, capsys):
    """Audit 15 item 5. ComfyUI 0.8.0 on a CPU: should_use_fp16 / should_use_bf16 are False there, so unet_dtype is
    fp32 (the fp16 file's 859520964 parameters x 4 = 3438083856 B), no manual cast (activations fp32) and vae_dtype
    fp32; text_encoder_dtype stays fp16. The Footprint Estimate node on SD1.5 loaded by ComfyUI's own
    load_checkpoint_guess_config with --cpu (audit15/node_cmp.py) gave peak 5580862019, peak_torch 5079367440,
    peak_device 5161431619, VAE fp32 in batches of 2; with weight_dtype fp8 peak 3065562179 (the tensors fp8 leaves
    as stored held in fp32). The CLI with --device cpu gives the same bytes; on cuda it keeps 16-bit. ui49: both peaks
    held ComfyUI's 400 MiB reserve (419430400 B), which ComfyUI keeps on no CPU device: 5161431619 and 2646131779 now."""
    base = (sd15, "--width", "512", "--height", "768", "--batch", "4", "--ram", "64", "--dynamic-vram", "off", "--json")
    rc, out, _ = estimate(capsys, *base, "--device", "cpu")  # no --vram: a CPU run has no card (fix16c R13)
    j = json.loads(out)
    assert rc == 0 and j["breakdown"]["sample"]["weights"] == 859520964 * 4
    assert (j["peak"], j["peak_torch"], j["peak_device"]) == (5580862019 - 419430400, 5079367440, 5161431619)
    # VAE.decode's batch on a CPU: int(get_free_memory(cpu) / memory_used), free = RAM available (psutil) with the other
    # models in it; memory_used_decode 2178 x 64 x 96 x 64 x 4 = 3425697792 B a sample (x VAE_KL_MEM_RATIO 2.73 at
    # most: 8.72 GiB), and 64 GiB less 3.7 GiB of weights holds 6 or more: the whole batch of 4 (the node's 2 was on
    # vram_gb 8)
    assert (j["vae"]["dtype"], j["vae"]["batch"]) == ("fp32", 4)
    assert j["breakdown"]["text_encode"]["weights"] == 123060480 * 2 + 77 * 8  # 16-bit on a CPU too (+ int64 position ids)
    assert any(a.startswith("activations in 32-bit") for a in j["assumptions"])
    # fp8 on 10 GiB of RAM: 10 GiB less ~1 GiB of weights / 3425697792 B = 2 samples at once, the node's batch on
    # vram_gb 8, so its peak
    rc, out, _ = estimate(capsys, *("10" if a == "64" else a for a in base), "--device", "cpu", "--weights-dtype", "fp8")
    assert json.loads(out)["peak"] == 3065562179 - 419430400 and json.loads(out)["vae"]["batch"] == 2
    rc, out, _ = estimate(capsys, *base, "--device", "cuda", "--vram", "8")
    j = json.loads(out)
    assert j["breakdown"]["sample"]["weights"] == 859520964 * 2 and j["vae"]["dtype"] == "bf16"
    assert any(a.startswith("activations in 16-bit") for a in j["assumptions"])


def test_write_records_the_host_ram_its_tiers_assumed(flux, tmp_path, capsys):
    """Audit 15 X2. FLUX.1-dev 1024², batch 1, cfg 1, written with --ram 16: on the 8 GB tier (budget int(8 GiB x 0.98) =
    8418135900, spec.CARD_SHARE since ux50 B4; 8546984919 at x 0.995 before) the DiT's spill is 23802816640 -
    (8418135900 - 891289600 fixed - 388791009 act - 19439550 margin) = 16684200899 B (16555351880 before) and the models
    kept for reload 9524621312 + 246120960 + 167639366 = 9938381638, so the run keeps 26622582537 B in RAM: over 16 GiB, does not fit; on VRAM alone it runs with that spill offloaded. The written
    metadata says which RAM the outcome assumed (16 GiB, from --ram), the VRAM-only outcome and the RAM each tier needs;
    the old fields stay."""
    models = tmp_path / "models"
    for src, sub, name in zip(flux, ("diffusion_models", "text_encoders", "clip", "vae"),
                              ("flux1-dev", "t5xxl_fp16", "clip_l", "ae")):
        (models / sub).mkdir(parents=True)
        (models / sub / f"{name}.safetensors").symlink_to(src)
    wf = {"last_node_id": 5, "links": [], "extra": {"ds": {"scale": 1}}, "version": 0.4, "nodes": [
        {"id": 1, "type": "UNETLoader", "widgets_values": ["flux1-dev.safetensors", "default"]},
        {"id": 2, "type": "DualCLIPLoader", "widgets_values": ["clip_l.safetensors", "t5xxl_fp16.safetensors", "flux", "default"]},
        {"id": 3, "type": "VAELoader", "widgets_values": ["ae.safetensors"]},
        {"id": 4, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1]},
        {"id": 5, "type": "KSampler", "widgets_values": [1, "fixed", 20, 1.0, "euler", "simple", 1.0]}]}
    p, out = tmp_path / "wf.json", tmp_path / "out.json"
    p.write_text(json.dumps(wf))
    rc, text, _ = estimate(capsys, "--workflow", str(p), "--models-dir", str(models), "--vram", "24", "--ram", "16",
                           "--dynamic-vram", "off", "--write", str(out))
    mem = json.loads(out.read_text())["extra"]["gpu_garden"]["memory"]
    assert mem["host_ram_assumed"] == {"available": 16 * GiB, "source": "--ram",
                                       "dynamic_vram": {"enabled": False, "source": "--dynamic-vram off"}}
    t8 = mem["tiers"][0]
    assert t8["gb"] == 8 and (t8["outcome"], t8["offloaded"]) == ("does not fit", 0)
    assert (t8["vram_outcome"], t8["vram_offloaded"], t8["ram_needed"]) == ("runs with offload", 16684200899, 26622582537)
    assert {"verdict", "outcome", "offloaded", "peak", "peak_phase", "decode"} <= set(t8)  # the schema before, kept
    assert "(host RAM 16.00 GiB, --ram)" in text and "with enough host RAM: 8 GB: runs with at least 15.5 GiB offloaded (needs" in text
