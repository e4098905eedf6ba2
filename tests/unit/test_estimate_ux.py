"""`gpu-garden estimate` as a new user meets it: a workflow whose files are not all there, a missing or wrong
--models-dir, the headline when ComfyUI would offload, and small messages (a new-user review, task ux-estimate)."""
import json

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.estimate import layouts
from gpu_garden.memory.units import GiB
from support.cli_run import estimate, estimate_workflow as est, unwrap


@pytest.fixture(scope="module")
def comfy(tmp_path_factory):
    """A ComfyUI folder: models/ with FLUX.1-dev, its text encoders and VAE, and one LoRA."""
    root = tmp_path_factory.mktemp("ComfyUI")
    d = root / "models"
    layouts.write_sparse("flux_flux1-dev", d / "diffusion_models" / "flux1-dev.safetensors")
    layouts.write_sparse("te_t5xxl_fp16", d / "text_encoders" / "t5xxl_fp16.safetensors")
    layouts.write_sparse("te_clip_l", d / "text_encoders" / "clip_l.safetensors")
    layouts.write_sparse("vae_flux_ae", d / "vae" / "ae.safetensors")
    layouts.write_sparse("te_clip_l", d / "loras" / "style.safetensors")  # content unread: a LoRA is only looked for
    return root


def flux(unet="flux1-dev.safetensors", lora=None):
    n = [{"id": 1, "type": "UNETLoader", "widgets_values": [unet, "default"]},
         {"id": 2, "type": "DualCLIPLoader", "widgets_values": ["t5xxl_fp16.safetensors", "clip_l.safetensors", "flux", "default"]},
         {"id": 3, "type": "VAELoader", "widgets_values": ["ae.safetensors"]},
         {"id": 4, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1]},
         {"id": 5, "type": "KSampler", "widgets_values": [1, "fixed", 20, 1.0, "euler", "simple", 1.0]},
         {"id": 6, "type": "VAEDecode", "widgets_values": []}]
    if lora:
        n.append({"id": 7, "type": "LoraLoaderModelOnly", "widgets_values": [lora, 1.0]})
    return {"last_node_id": len(n), "nodes": n, "links": [], "extra": {}, "version": 0.4}


def test_missing_main_model_is_incomplete_not_fits(comfy, tmp_path, capsys):
    models = comfy / "models"
    wf = flux(unet="flux1-dev-fp8.safetensors", lora="my_lora.safetensors")
    rc, out, err = est(tmp_path, capsys, wf, "--models-dir", str(models), "--vram", "12")
    lines = out.splitlines()
    assert rc == 1
    assert lines[0] == f"INCOMPLETE: 1 model file named by the workflow not found under {models}:"
    assert "flux1-dev-fp8.safetensors" in lines[1] and "diffusion_models/, unet/" in lines[1]
    # cliZ H: the LoRA, never counted, is a note, not a second reason for INCOMPLETE
    assert "my_lora.safetensors (LoraLoaderModelOnly; looked in loras/)" in out and "my_lora" not in lines[2]
    v = next(x for x in lines if x.startswith("verdict:"))
    assert "FITS" not in v and "INCOMPLETE: 1 model file not found" in v
    assert "12 GB fits" not in out and "knobs" not in out
    # --write refuses: a shared workflow must not carry "fits" for a graph we could not see whole
    o = tmp_path / "shared.json"
    rc, out, err = est(tmp_path, capsys, wf, "--models-dir", str(models), "--vram", "12", "--write", str(o))
    assert rc == 1 and not o.exists() and "nothing written" in err and out.startswith("INCOMPLETE")
    rc, out, _ = est(tmp_path, capsys, wf, "--models-dir", str(models), "--vram", "12", "--json")
    j = json.loads(out)
    assert rc == 1 and j["outcome"]["status"] == "incomplete"
    assert j["workflow"]["missing"] == ["flux1-dev-fp8.safetensors"]
    assert j["workflow"]["missing_not_counted"] == ["my_lora.safetensors"]
    assert {t["outcome"] for t in j["tiers"]} == {"incomplete"}


@pytest.mark.parametrize("vram", [[], ["--vram", "12"]])
def test_incomplete_json_verdict_is_the_texts(comfy, tmp_path, capsys, vram):
    # ux19b: the text said "verdict: INCOMPLETE" while the JSON's verdict said "no budget" (no --vram) or "does not
    # fit" (--vram 12) for the same graph; a graph not seen whole has no verdict, under either name
    wf, models = flux(unet="flux1-dev-fp8.safetensors"), str(comfy / "models")
    _, out, _ = est(tmp_path, capsys, wf, "--models-dir", models, *vram)
    assert next(x for x in out.splitlines() if x.startswith("verdict:")).startswith("verdict: INCOMPLETE")
    rc, out, _ = est(tmp_path, capsys, wf, "--models-dir", models, *vram, "--json")
    j = json.loads(out)
    assert rc == 1 and j["verdict"] == j["outcome"]["status"] == "incomplete" and j["headroom"] is None
    assert {t["verdict"] for t in j["tiers"]} == {"incomplete"}


def _flux_files(comfy):
    d = comfy / "models"
    return [str(d / "diffusion_models" / "flux1-dev.safetensors"), str(d / "text_encoders" / "t5xxl_fp16.safetensors"),
            str(d / "text_encoders" / "clip_l.safetensors"), str(d / "vae" / "ae.safetensors")]


def test_dynamic_vram_line_and_verdict_give_the_streamed_size_alike(comfy, capsys):
    # ux19b: "Dynamic VRAM (...): fits, streaming 0.4 GiB" beside the verdict's "436.63 MiB of weights stream in"
    rc, out, _ = estimate(capsys, *_flux_files(comfy), "--weights-dtype", "fp8", "--dynamic-vram", "on",
                          "--vram", "12", "--ram", "64")
    lines = unwrap(out).splitlines()
    dyn = next(x for x in lines if x.startswith("Dynamic VRAM ("))
    v = next(x for x in lines if x.startswith("verdict:"))
    assert rc == 0 and "fits, streaming 436.63 MiB of weights per step" in dyn
    assert "436.63 MiB of weights stream in" in v


@pytest.mark.parametrize("vae_dtype, cast", [("fp32", False), ("auto", True), ("bf16", True)])
def test_fp32_cast_assumption_follows_the_vae_dtype(comfy, capsys, vae_dtype, cast):
    # FLUX's ae.safetensors is the only fp32 file here: with --vae-dtype fp32 nothing is cast to 16 bits
    rc, out, _ = estimate(capsys, *_flux_files(comfy), "--vae-dtype", vae_dtype, "--vram", "24", "--ram", "64", "--json")
    said = "32-bit float weights are cast to 16-bit on load (ComfyUI's default on GPUs with fp16/bf16)"
    assert (said in json.loads(out)["assumptions"]) is cast


def test_a_found_lora_is_not_counted_and_completes(comfy, tmp_path, capsys):
    models = comfy / "models"
    _, base, _ = est(tmp_path, capsys, flux(), "--models-dir", str(models), "--vram", "80", "--json")
    rc, out, _ = est(tmp_path, capsys, flux(lora="style.safetensors"), "--models-dir", str(models), "--vram", "80", "--json")
    j, b = json.loads(out), json.loads(base)
    assert rc == 0 and j["workflow"]["missing"] == [] and j["outcome"]["status"] == "fits"
    assert j["peak"] == b["peak"] and any("style.safetensors" in a for a in j["assumptions"])


def test_workflow_needs_models_dir(tmp_path, capsys):
    rc, out, err = est(tmp_path, capsys, flux(), "--vram", "24")
    assert rc == 2 and out == "" and err.count("\n") == 1
    assert "--models-dir is required with --workflow (your ComfyUI/models folder)" in err


def test_comfyui_folder_as_models_dir_reads_its_models(comfy, tmp_path, capsys):
    rc, out, _ = est(tmp_path, capsys, flux(), "--models-dir", str(comfy), "--vram", "80", "--json")
    j = json.loads(out)
    assert rc == 0 and j["workflow"]["missing"] == [] and j["workflow"]["models_dir"] == str(comfy / "models")
    assert any("is the ComfyUI folder" in a for a in j["assumptions"])
    # a folder with none of the model sub-folders: the one-line error says what to give
    rc, _, err = est(tmp_path, capsys, flux(), "--models-dir", str(tmp_path), "--vram", "80")
    assert rc == 2 and err.count("\n") == 1 and "give your ComfyUI/models folder" in err
    rc, _, err = est(tmp_path, capsys, flux(), "--models-dir", str(tmp_path / "nope"), "--vram", "80")
    assert rc == 2 and "no such folder" in err


def flux_files(comfy):
    m = comfy / "models"
    return [str(m / "diffusion_models" / "flux1-dev.safetensors"), str(m / "text_encoders" / "t5xxl_fp16.safetensors"),
            str(m / "text_encoders" / "clip_l.safetensors"), str(m / "vae" / "ae.safetensors")]


def files_est(comfy, capsys, *args):
    rc = cli.main(["estimate", *flux_files(comfy), "--width", "1024", "--height", "1024", "--ram", "64", *args])
    return rc, capsys.readouterr().out


def test_over_the_card_comfyui_offloads_and_runs(comfy, capsys):
    """FLUX.1-dev bf16 (peak 23.38 GiB) on 12 GiB: ComfyUI's load_models_gpu loads it partially in NORMAL_VRAM."""
    rc, out = files_est(comfy, capsys, "--vram", "12", "--dynamic-vram", "off", "--json")
    j = json.loads(out)
    assert rc == 0 and j["verdict"] == "does not fit"          # the peak against the budget keeps its meaning
    assert j["outcome"]["status"] == "runs with offload"
    assert j["outcome"]["offloaded"] == j["peak"] - 12 * GiB == j["host_ram"]["offloaded"]
    rc, out = files_est(comfy, capsys, "--vram", "12", "--dynamic-vram", "off")
    v = next(x for x in unwrap(out).splitlines() if x.startswith("verdict:"))
    assert rc == 0 and v.startswith("verdict: RUNS WITH OFFLOAD in 12.00 GiB") and "11.38 GiB of weights stay in RAM" in v
    assert "headroom" not in v and "23.38 GiB" in v
    # --offload none is --highvram: ComfyUI loads it whole, so it does not fit
    rc, out = files_est(comfy, capsys, "--vram", "12", "--dynamic-vram", "off", "--offload", "none", "--json")
    assert rc == 1 and json.loads(out)["outcome"]["status"] == "does not fit"
    # 2 GiB: activations, fixed and the weights kept on the GPU are over: ComfyUI cannot do it either
    rc, out = files_est(comfy, capsys, "--vram", "2", "--dynamic-vram", "off")
    assert rc == 1 and "verdict: DOES NOT FIT in 2.00 GiB" in unwrap(out) and "more than ComfyUI can offload" in unwrap(out)


def test_tiers_say_offloaded_and_streaming_explains_headroom(comfy, tmp_path, capsys):
    rc, out, _ = est(tmp_path, capsys, flux(), "--models-dir", str(comfy / "models"), "--vram", "12", "--dynamic-vram", "off")
    tiers = out.splitlines()[-1]  # 23.38 GiB peak on 12 GB x 0.98 (11.76 GiB, spec.CARD_SHARE): 11.62 GiB over (x 0.995: 11.4)
    assert rc == 0 and "12 GB: runs with at least 11.6 GiB offloaded" in tiers and "8 GB: runs with at least 15.5" in tiers and "48 GB: fits" in tiers
    rc, out = files_est(comfy, capsys, "--vram", "12", "--dynamic-vram", "on")
    v = next(x for x in out.splitlines() if x.startswith("verdict:"))
    assert rc == 0 and v.startswith("verdict: FITS WITH STREAMING") and "-11.38" not in v and "11.38 GiB of weights stream" in v


@pytest.fixture(scope="module")
def wan(tmp_path_factory):
    d = tmp_path_factory.mktemp("wan")
    return [str(layouts.write_sparse("wan_wan2.1_t2v_1.3B_fp16", d / "wan2.1_t2v_1.3B_fp16.safetensors")),
            str(layouts.write_sparse("te_umt5_xxl_fp16", d / "umt5_xxl_fp16.safetensors"))]


def plain(capsys, *argv):
    return estimate(capsys, *argv, "--ram", "64", "--dynamic-vram", "off")


def test_a_text_file_is_not_a_safetensors_file(tmp_path, capsys):
    p = tmp_path / "node.py"
    p.write_text("import os\nprint('hi')\n")
    rc, out, err = plain(capsys, str(p), "--width", "512", "--height", "512", "--vram", "12")
    assert rc == 2 and err.count("\n") == 1 and "not a safetensors file (it starts with text 'import o'" in err
    assert "impossible" not in err


def test_without_a_size_the_family_native_size(comfy, wan, capsys):
    rc, out, _ = plain(capsys, *flux_files(comfy), "--vram", "48", "--json")
    j = json.loads(out)
    assert rc == 0 and (j["width"], j["height"], j["frames"]) == (1024, 1024, 1)
    assert j["assumptions"][0].startswith("size not given: 1024x1024, the native size of FLUX.1")
    rc, out, _ = plain(capsys, *wan, "--vram", "48", "--json")
    j = json.loads(out)
    assert (j["width"], j["height"], j["frames"]) == (832, 480, 81) and "81 frames" in j["assumptions"][0]
    rc, _, err = plain(capsys, *wan, "--width", "832", "--vram", "48")
    assert rc == 2 and "--width and --height go together" in err


def test_knob_labels_say_what_to_change(comfy, wan, capsys):
    rc, out, _ = plain(capsys, *wan, "--vram", "12")
    assert "fp8 text encoder (umt5_xxl_fp8_e4m3fn_scaled.safetensors)" in out and "t5xxl_fp8" not in out
    assert "  naive attention *" in out and "* naive attention: only without SDPA / xformers" in out
    # the text encoders are the peak; off them, sampling is: the knob says the peak moved
    rc, out, _ = plain(capsys, *wan, "--vram", "12", "--json")
    j = json.loads(out)
    te_cpu = next(k for k in j["knobs"] if k["id"] == "te_cpu")
    assert j["peak_phase"] == "text_encode" and te_cpu["peak_moves_to"] == "sample" and te_cpu["peak_after"] == j["phases"]["sample"]
    # knobs under a heading that says why: ComfyUI offloads already (that knob is the verdict), or it fits already
    rc, out, _ = plain(capsys, *flux_files(comfy), "--width", "1024", "--height", "1024", "--vram", "16")
    assert rc == 0 and "to run without offload (saving, then what to change):" in out and "partial offload of" not in out
    rc, out, _ = plain(capsys, *flux_files(comfy), "--width", "1024", "--height", "1024", "--vram", "48")
    assert rc == 0 and "to save more (it fits already; saving, then what to change):" in out and "knobs (" not in out
