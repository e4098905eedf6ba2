"""cliZ: the CLI defects rev52's newcomer walk left open (notes /work/tools/s52/out/rev52.md "Left open", part 2):
H (a LoRA never counted cannot make a workflow's estimate incomplete; the folders searched; --write and the API
format), E (Hub repo ids to bundled layouts), G (one per-card-tier wording), C (prose wrapped to the terminal), K."""
import json

import pytest

from gpu_garden.memory.estimate import layouts
from support.cli_run import estimate, estimate_workflow as wf_est


@pytest.fixture(scope="module")
def comfy(tmp_path_factory):
    """models/ with FLUX.1-dev, its text encoders and VAE; no LoRA."""
    d = tmp_path_factory.mktemp("ComfyUI") / "models"
    layouts.write_sparse("flux_flux1-dev", d / "diffusion_models" / "flux1-dev.safetensors")
    layouts.write_sparse("te_t5xxl_fp16", d / "text_encoders" / "t5xxl_fp16.safetensors")
    layouts.write_sparse("te_clip_l", d / "text_encoders" / "clip_l.safetensors")
    layouts.write_sparse("vae_flux_ae", d / "vae" / "ae.safetensors")
    (d / "loras").mkdir()
    return d


def flux_ui(unet="flux1-dev.safetensors", lora=None):
    n = [{"id": 1, "type": "UNETLoader", "widgets_values": [unet, "default"]},
         {"id": 2, "type": "DualCLIPLoader", "widgets_values": ["t5xxl_fp16.safetensors", "clip_l.safetensors", "flux", "default"]},
         {"id": 3, "type": "VAELoader", "widgets_values": ["ae.safetensors"]},
         {"id": 4, "type": "EmptySD3LatentImage", "widgets_values": [1024, 1024, 1]}]
    if lora:
        n.append({"id": 7, "type": "LoraLoaderModelOnly", "widgets_values": [lora, 1.0]})
    return {"last_node_id": len(n), "nodes": n, "links": [], "extra": {}, "version": 0.4}


# --- H -------------------------------------------------------------------------------------------------------------
def test_h_only_a_lora_missing_is_a_note_not_incomplete(comfy, tmp_path, capsys):
    # breaks if read() files a missing LoRA under "missing" again (rev52 H: INCOMPLETE, exit 1)
    rc, out, _ = wf_est(tmp_path, capsys, flux_ui(lora="my_lora.safetensors"), "--models-dir", str(comfy), "--vram", "24")
    assert rc == 0 and "INCOMPLETE" not in out
    assert "not found, and not counted if found (a LoRA is merged into the weights it patches): " \
           "my_lora.safetensors (LoraLoaderModelOnly; looked in loras/)" in " ".join(out.split())
    assert "per card tier: not judged" not in out
    rc, out, _ = wf_est(tmp_path, capsys, flux_ui(lora="my_lora.safetensors"), "--models-dir", str(comfy), "--vram", "24",
                        "--json")
    j = json.loads(out)
    assert j["outcome"]["status"] != "incomplete" and j["workflow"]["missing"] == []
    assert j["workflow"]["missing_not_counted"] == ["my_lora.safetensors"]


def test_h_lora_and_counted_file_missing_counts_only_the_counted(comfy, tmp_path, capsys):
    rc, out, _ = wf_est(tmp_path, capsys, flux_ui(unet="flux1-dev-fp8.safetensors", lora="my_lora.safetensors"),
                        "--models-dir", str(comfy), "--vram", "12")
    assert rc == 1
    assert out.splitlines()[0] == f"INCOMPLETE: 1 model file named by the workflow not found under {comfy}:"
    assert "verdict: INCOMPLETE: 1 model file not found" in out


def test_h_lora_missing_still_writes(comfy, tmp_path, capsys):
    # a LoRA is not counted: the requirement written is the one a found LoRA would give
    o = tmp_path / "shared.json"
    rc, out, err = wf_est(tmp_path, capsys, flux_ui(lora="my_lora.safetensors"), "--models-dir", str(comfy),
                          "--vram", "24", "--write", str(o))
    assert rc == 0 and o.exists() and "nothing written" not in err
    assert json.loads(o.read_text())["extra"]["gpu_garden"]["memory"]["files"] == \
        ["flux1-dev.safetensors", "t5xxl_fp16.safetensors", "clip_l.safetensors", "ae.safetensors"]


def test_h_none_found_names_the_folders_searched(comfy, tmp_path, capsys):
    # breaks if the error lists the names alone (rev52 H: "... under models: sd_xl_base_1.0.safetensors")
    wf = {"last_node_id": 2, "links": [], "nodes": [
        {"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": ["sd_xl_base_1.0.safetensors"]},
        {"id": 2, "type": "LoraLoader", "widgets_values": ["style.safetensors", 1.0, 1.0]}]}
    rc, _, err = wf_est(tmp_path, capsys, wf, "--models-dir", str(comfy))
    assert rc == 2
    assert err.strip() == (f"gpu-garden estimate: error: none of the workflow's model files was found under {comfy}: "
                           "sd_xl_base_1.0.safetensors (looked in checkpoints/); style.safetensors (looked in loras/)")


def test_h_api_format_write_says_which_format_and_how(comfy, tmp_path, capsys):
    # breaks if the refusal is the old "an API-format workflow has no metadata field; save the workflow (UI format)"
    # or comes after the estimate (it is checked before anything is estimated: stdout stays empty)
    api = {"1": {"class_type": "UNETLoader", "inputs": {"unet_name": "flux1-dev.safetensors", "weight_dtype": "default"}},
           "2": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 1}}}
    o = tmp_path / "o.json"
    rc, out, err = wf_est(tmp_path, capsys, api, "--models-dir", str(comfy), "--vram", "24", "--write", str(o))
    assert rc == 2 and out == "" and not o.exists()
    assert "--write needs the workflow in UI format (the .json of ComfyUI's Workflow > Save or Export, not Export (API))" in err
    assert "--workflow reads either format" in err


# --- E -------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, layout", [("black-forest-labs/FLUX.1-dev", "flux_flux1-dev"),
                                          ("stabilityai/stable-diffusion-xl-base-1.0", "sdxl_sd_xl_base_1.0"),
                                          ("stable-diffusion-xl-base-1.0", "sdxl_sd_xl_base_1.0"),
                                          ("Qwen/Qwen-Image", "qwen_image_qwen_image_bf16"),
                                          ("Wan2.2-TI2V-5B", "wan_wan2.2_ti2v_5B_fp16")])
def test_e_hub_repo_ids_size_the_bundled_layout_and_name_it(tmp_path, monkeypatch, capsys, name, layout):
    # breaks if FAMILY_FILES' hub entries are dropped or resolve() stops reading them (rev52 E: "no such file" /
    # "no bundled layout has that name")
    monkeypatch.chdir(tmp_path)  # no file of that name here
    rc, out, err = estimate(capsys, name, "--vram", "80", "--ram", "64")
    assert rc == 0, err
    assert f"{name}: sized from the bundled layout of {layout}" in " ".join(out.split())
    assert f"{layout} (bundled)" in out


def test_e_hub_note_says_nothing_is_downloaded(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _, out, _ = estimate(capsys, "black-forest-labs/FLUX.1-dev", "--vram", "24", "--ram", "64")
    assert ("black-forest-labs/FLUX.1-dev: sized from the bundled layout of flux_flux1-dev (the model of the Hub repo "
            "black-forest-labs/FLUX.1-dev; nothing downloaded)") in " ".join(out.split())


def test_e_hub_ids_live_in_the_family_table_only():
    # one source of truth: every Hub id is in FAMILY_FILES; a name no entry lists is not taken
    from gpu_garden.memory.estimate import layouts as L
    assert L.resolve("black-forest-labs/FLUX.1-dev") == ("family", "flux1")
    assert L.resolve("stable-diffusion-v1-5") == ("family", "sd1")
    assert L.resolve("black-forest-labs/FLUX.1-schnell") is None  # schnell has no bundled layout (no guidance_in)
    assert L.hub_repo("FLUX.1-dev") == "black-forest-labs/FLUX.1-dev" and L.hub_repo("sdxl") is None


@pytest.mark.parametrize("name, closest", [
    ("sd_xl_turbo.safetensors", "sdxl, sdxl_sd_xl_base_1.0, vae_sdxl_vae"),
    ("black-forest-labs/FLUX.1-schnell", "flux-dev, flux1, flux_flux1-dev")])
def test_e_unknown_name_gives_three_close_names_and_the_listing_command(tmp_path, monkeypatch, capsys, name, closest):
    # breaks if the error lists every layout again (rev52 E: a 700-character line) or names no listing command
    monkeypatch.chdir(tmp_path)
    rc, _, err = estimate(capsys, name)
    assert rc == 2
    assert err.strip() == (f"gpu-garden estimate: error: {name}: no such file, and no bundled layout has that name "
                           f"(closest: {closest}; all: gpu-garden estimate --layouts)")
    assert len(err) < 250


def test_e_layouts_lists_every_name(capsys):
    rc, out, _ = estimate(capsys, "--layouts")
    assert rc == 0
    lines = out.splitlines()
    assert "  sdxl              sdxl_sd_xl_base_1.0  (also: stabilityai/stable-diffusion-xl-base-1.0)" in lines  # ux56
    assert "  te_t5xxl_fp16" in lines and "  vae_flux_ae" in lines
    from gpu_garden.memory.estimate.layouts import LAYOUT_DIR
    assert sum(1 for x in lines if x.startswith("  ") and len(x.split()) == 1) == len(list(LAYOUT_DIR.glob("*.json.gz")))


# --- G -------------------------------------------------------------------------------------------------------------
def test_g_one_tier_wording_from_verdict_label():
    # breaks if label() goes back to the CLI's "runs (5.2 GiB offloaded)" or the node's "offload 5.2 GiB"
    from gpu_garden.memory.estimate import verdict
    G = 1 << 30
    assert verdict.label("runs with offload", int(5.2 * G)) == "runs with at least 5.2 GiB offloaded"
    assert verdict.label("fits", 0) == "fits"
    tiers = [{"gb": 8, "label": "runs with at least 5.2 GiB offloaded"}, {"gb": 12, "label": "fits"}]
    assert verdict.tier_line(tiers) == "8 GB: runs with at least 5.2 GiB offloaded · 12 GB: fits"  # the node's chips and separator


def test_g_cli_tier_line_and_the_tiers_carry_the_same_words(comfy, tmp_path, capsys):
    # the CLI's line is built from the tiers' label, the field the node reads (route, node output, extra.gpu_garden.memory)
    o = tmp_path / "shared.json"
    rc, out, _ = wf_est(tmp_path, capsys, flux_ui(), "--models-dir", str(comfy), "--vram", "12", "--dynamic-vram", "off",
                        "--write", str(o))
    line = next(x for x in out.splitlines() if x.startswith("per card tier:"))
    assert line.startswith("per card tier: 8 GB: runs with at least 15.5 GiB offloaded · 12 GB: runs with at least 11.6 GiB offloaded · ")
    assert "48 GB: fits · 80 GB: fits (host RAM 64.00 GiB, --ram)" in line
    tiers = json.loads(o.read_text())["extra"]["gpu_garden"]["memory"]["tiers"]
    assert line == "per card tier: " + " · ".join(f"{t['gb']} GB: {t['label']}" for t in tiers) + \
        " (host RAM 64.00 GiB, --ram)"
    assert tiers[0]["label"] == "runs with at least 15.5 GiB offloaded" and tiers[0]["vram_label"] == tiers[0]["label"]


def test_g_with_enough_ram_line_uses_vram_label(comfy, tmp_path, capsys):
    _, out, _ = wf_est(tmp_path, capsys, flux_ui(), "--models-dir", str(comfy), "--vram", "24", "--ram", "16",
                       "--dynamic-vram", "off")
    line = next(x for x in out.splitlines() if x.startswith("  with enough host RAM:"))
    assert line.startswith("  with enough host RAM: 8 GB: runs with at least 15.5 GiB offloaded (needs ")
    assert " · 12 GB: runs with at least 11.6 GiB offloaded (needs " in line


# --- C -------------------------------------------------------------------------------------------------------------
def test_c_width_is_80_off_a_terminal_and_never_below_60(monkeypatch):
    import shutil
    import sys
    from gpu_garden.memory import term

    class Tty:
        def isatty(self):
            return True
    assert term.width() == 80  # pytest's captured stdout is no terminal
    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=None: type("S", (), {"columns": 40})())
    assert term.width() == 60
    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=None: type("S", (), {"columns": 132})())
    assert term.width() == 132


def test_c_wrap_keeps_tables_and_commands_and_hangs_prose():
    # breaks if keep() stops telling table rows or commands apart (a wrapped command is a broken command)
    from gpu_garden.memory import term
    cmd = "python main.py --windows-standalone-build --disable-smart-memory --reserve-vram 1.5 --use-pytorch-cross-attention"
    row = "  vae-decode           73%  traceback: forward() in modules/diffusionmodules/model.py; traceback source line"
    note = "  - " + "word " * 30
    out = term.wrap("\n".join([cmd, row, note]), 60).split("\n")
    assert out[:2] == [cmd, row]
    assert out[2].startswith("  - word") and all(x.startswith("    word") for x in out[3:]) and len(out) == 5
    assert all(len(x) <= 60 for x in out[2:])
    md = "para one " * 12 + "\nstill para\n\n```bash\n" + cmd + "\n```\n- item " + "x " * 40
    flowed = term.reflow(md, 60).split("\n")
    assert flowed[0].startswith("para one") and not flowed[1].startswith(" ")  # a paragraph: no hanging indent
    assert cmd in flowed and "```bash" in flowed
    assert max(len(x) for x in flowed if x != cmd) <= 60


def test_c_demo_lines_over_80_are_table_rows_and_commands_only(capsys):
    # breaks if the estimate's notes/assumptions or the triage guide stop wrapping (rev52 C: 46 of 106 lines over 80)
    from gpu_garden.memory import cli, term
    cli.main(["demo"])
    out = capsys.readouterr().out.splitlines()
    long = [x for x in out if len(x) > 80]
    rest = [x for x in long if not term.keep(x) and not x.startswith("Triage of a bundled")]  # mend56: peak, latent, Numbers wrap
    assert rest == [], rest
    assert sum(term.keep(x) for x in long) >= 10  # the budget, component, knob and cause tables and the guide's commands


def test_c_json_is_not_wrapped(capsys):
    from gpu_garden.memory import cli
    cli.main(["estimate", "flux1", "--vram", "24", "--ram", "64", "--json"])
    j = json.loads(capsys.readouterr().out)
    assert any(len(a) > 80 for a in j["assumptions"])  # one string each, as before


# --- K (the rest) ----------------------------------------------------------------------------------------------------
def test_k_platform_has_help_text():
    # breaks if --platform's help= is dropped again (rev52 K: the one estimate option with none)
    from gpu_garden.memory import cli
    sub = cli.build_parser()._subparsers._group_actions[0].choices["estimate"]
    act = next(a for a in sub._actions if "--platform" in a.option_strings)
    assert act.help and "windows" in act.help and "600 MiB" in act.help


def test_k_kv_llamacpp_from_a_16bit_repo_says_how_to_size_a_quantized_gguf(capsys):
    # breaks if run_model.llamacpp_16bit_note is not called (rev52 K: a 16-bit GGUF sized with no word on Q4_K_M)
    from support.cli_run import flat, run
    note = ("note: sized as a 16-bit GGUF (bf16, the checkpoint's own dtype); for a quantized GGUF give its type: "
            "--weights-dtype Q4_K_M (or Q8_0, ...), or the GGUF repo itself as --model")
    _, out, _ = run(["kv", "--model", "Qwen/Qwen3-8B", "--runtime", "llama.cpp", "--vram", "12"], capsys)
    assert note in flat(out)
    for argv in (["--weights-dtype", "Q4_K_M"], ["--runtime", "vllm"]):  # a type given, or another runtime: no note
        _, out, _ = run(["kv", "--model", "Qwen/Qwen3-8B", "--runtime", "llama.cpp", "--vram", "12", *argv], capsys)
        assert "16-bit GGUF" not in out
    _, out, _ = run(["kv", "--model", "unsloth/Qwen3-8B-GGUF:Q4_K_M", "--runtime", "llama.cpp", "--vram", "12"], capsys)
    assert "16-bit GGUF" not in out


def test_k_triage_text_shows_every_evidence_line_json_has(capsys):
    # breaks if the text keeps cutting each cause's evidence at 2 (the ComfyUI tiled-retry warning was JSON-only)
    from support.cli_run import flat, run
    log = "memory/triage/samples/comfyui_vae_decode_oom.log"
    from pathlib import Path
    log = str(Path(__file__).resolve().parents[2] / log)
    _, j, _ = run(["triage", log, "--json"], capsys)
    _, text, _ = run(["triage", log], capsys)
    top = j["events"][-1]["causes"][0]
    assert top["id"] == "vae-decode" and len(top["evidence"]) == 3
    for e in top["evidence"]:
        assert e in flat(text), e
    assert "also: ComfyUI: Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding." \
        in flat(text)
