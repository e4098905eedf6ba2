"""rev52's findings (a newcomer's walk through README, docs/triage.md, kv.md, estimate.md on the CLI): the names and the
help a user types and reads."""
import json

import pytest

from support.cli_run import estimate, run, unwrap


@pytest.mark.parametrize("name,family", [("FLUX.1-dev", "flux1"), ("FLUX.1", "flux1"), ("Wan2.1-T2V-1.3B", "wan21")])
def test_an_estimate_by_the_hub_name_with_its_dots(capsys, name, family):
    """`estimate FLUX.1-dev` (the repo's name; README calls it FLUX.1-dev, the report prints "FLUX.1 (flux1 dev)") was
    refused as no bundled layout while flux-dev, flux.2 and sd1.5 were read: the dot was kept in the name only."""
    rc, out, err = estimate(capsys, name, "--vram", "24", "--ram", "64", "--json")
    assert rc == 0, err
    j = json.loads(out)
    assert j["family"] == family
    assert any(a.startswith(f"{name}: sized from the bundled layout of ") for a in j["assumptions"]), j["assumptions"]


@pytest.mark.parametrize("typed,meant", [("q4km", "Q4_K_M"), ("Q4-K-M", "Q4_K_M")])
def test_a_mistyped_gguf_type_on_ollama_is_named_as_a_typo(capsys, typed, meant):
    """`kv --model qwen3:8b --weights-dtype q4km` said "(q4km is a vLLM or SGLang checkpoint's type: kv --model REPO
    --runtime vllm)": a typo of Q4_K_M sent the user to another runtime. A real checkpoint format still says that."""
    rc, _, err = run(["kv", "--model", "qwen3:8b", "--weights-dtype", typed], capsys)
    assert rc == 2 and f"{typed} is no type kv knows; did you mean {meant}?" in err, err
    assert "checkpoint's type" not in err
    rc, _, err = run(["kv", "--model", "qwen3:8b", "--weights-dtype", "awq"], capsys)
    assert rc == 2 and "awq is a vLLM or SGLang checkpoint's type: kv --model REPO --runtime vllm" in err, err


def test_trace_help_names_the_families_and_estimate_help_the_tiled_exit(capsys):
    """trace --help gave `--family FAMILY` with no list (the README has it, an unknown one is refused with it), and
    --width/--frames/--batch no word; estimate --help's exit status left out a decode tiled after ComfyUI's retry,
    which exits 0 as the README says (`estimate wan22 --vram 10`: runs with offload, decode tiled, exit 0)."""
    from gpu_garden.memory import cli
    from gpu_garden.memory.trace.comfy_checkout import family_names
    helps = {}
    for sub in ("trace", "estimate"):
        with pytest.raises(SystemExit):
            cli.main([sub, "--help"])
        helps[sub] = " ".join(capsys.readouterr().out.split())
    assert "--family FAMILY the model family: " + ", ".join(family_names()) in helps["trace"]
    for opt in ("--width PX image or video width", "--frames FRAMES video frames (default 1)", "--batch BATCH latent batch"):
        assert opt in helps["trace"], opt
    assert "or with the VAE decode tiled after ComfyUI's out-of-memory retry), 1 it does not fit" in helps["estimate"]


def test_readme_estimate_synopsis_names_every_estimate_option():
    """README's `gpu-garden estimate` synopsis lacked --gpu-arch (in --help and docs/estimate.md only), as kv's once
    lacked six options (test_review24 keeps kv's)."""
    import re
    from pathlib import Path

    from gpu_garden.memory import cli
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```\ngpu-garden estimate FILE.*?```", text, re.S).group(0)
    named = set(re.findall(r"--[a-z][a-z0-9-]+", block))
    sub = cli.build_parser()._subparsers._group_actions[0].choices["estimate"]
    options = {o for a in sub._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
    assert options - named == set() and named - options == set()


def test_estimate_of_a_log_names_triage(tmp_path, capsys):
    """`estimate comfyui.log` said only "give a .safetensors or .gguf model file"; triage given a model file already names
    estimate, so the log's own command is named the other way too."""
    log = tmp_path / "comfyui.log"
    log.write_text("got prompt\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    rc, _, err = estimate(capsys, str(log), "--vram", "12")
    assert rc == 2 and "not a safetensors file (it starts with text 'got prom'" in err, err
    assert "is read by gpu-garden triage FILE)" in err


def test_the_demo_judges_a_24_gb_card_on_its_torch_total(capsys):
    """The demo printed "verdict: TIGHT in 24.00 GiB (a 24 GB card), headroom 636.55 MiB", the one place left judging a
    "24 GB card" on 24 GiB: since ux50 (B4) a 24 GB card is the RTX 4090's 23.55 GiB as torch reports it, for the
    estimate's tiers, --gpu-name and kv alike (spec.CARD_MEASURED); on it the headroom is 175.75 MiB."""
    from gpu_garden.memory import cli
    cli.main(["demo"])
    out = unwrap(capsys.readouterr().out)  # the verdict line wraps (term.py)
    assert "verdict: TIGHT in 23.55 GiB (a 24 GB card), headroom 175.75 MiB" in out, out
    rc, out, _ = estimate(capsys, "flux1-dev", "--gpu-name", "RTX 4090", "--dynamic-vram", "off", "--ram", "64")
    assert rc == 0 and "verdict: TIGHT in 23.55 GiB (RTX 4090: 23.55 GiB as torch reports it), headroom 175.75 MiB" in unwrap(out)


@pytest.mark.parametrize("typed", ["0", "86401", "-0.5"])
def test_budget_watch_refusal_echoes_the_number_typed(capsys, typed):
    """`budget --watch 0` said "got 0.0" (the float argparse made of it), not what was typed."""
    rc, _, err = run(["budget", "--watch", typed], capsys)
    assert rc == 2 and err.strip().endswith(f"up to 86400 (a day), got {typed}"), err
