"""Task ux56 (the CLI used as a new user would): each test fails on the code before its fix."""
import json
import re

import pytest

from gpu_garden.memory import cli
from support.cli_run import flat, unwrap


def _help(capsys, command):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    return flat(capsys.readouterr().out)


def test_kv_help_gives_vllm_s_default_share_by_version(capsys):
    """`kv --help` said "(default 0.90)" while the plan (and its printed command) takes vLLM's 0.92 from 0.20.0
    (runtimes/vllm.py default_util): the RTX 4090 plan says "vLLM share 21.67 GiB" = 0.92 x 23.55."""
    from gpu_garden.memory.llm.runtimes import vllm

    assert (vllm.default_util(None), vllm.default_util((0, 19, 0))) == (0.92, 0.90)  # by hand: vllm#38284's 0.92
    text = _help(capsys, "kv")
    text = text[text.index("options:"):]  # past the usage lines
    share = text[text.index("--gpu-memory-utilization F"):text.index("--max-num-batched-tokens N")]
    assert "0.92 from vLLM 0.20.0" in share and "0.90 before" in share, share


def _assumptions(capsys, *argv):
    from support.cli_run import estimate

    rc, out, err = estimate(capsys, *argv, "--vram", "80", "--ram", "64", "--dynamic-vram", "off", "--json")
    assert rc == 0, err
    j = json.loads(out)
    j["size_note"] = next(a for a in j["assumptions"] if a.startswith("size not given"))
    return j


def test_a_typed_frames_is_not_called_the_family_s_native_size(capsys):
    """`estimate wan22 --frames 41` said "size not given: 1280x704, 41 frames, the native size of Wan 2.2" (Wan 2.2's
    native length is 49, spec.NATIVE_SIZE); `estimate sdxl --frames 81` said "1024x1024, 81 frames, the native size of
    Stable Diffusion XL" and, two lines on, "frames=81 ignored"."""
    j = _assumptions(capsys, "wan22", "--frames", "41")
    assert j["frames"] == 41
    assert j["size_note"] == ("size not given: 1280x704, the native size of Wan 2.2 (--width/--height for "
                                   "another); 41 frames from --frames")
    j = _assumptions(capsys, "sdxl", "--frames", "81")
    assert j["size_note"] == "size not given: 1024x1024, the native size of Stable Diffusion XL (--width/--height for another)"
    assert "Stable Diffusion XL is an image model: frames=81 ignored" in j["assumptions"]
    # no --frames: the family's native length, named as such (unchanged)
    j = _assumptions(capsys, "wan22")
    assert j["size_note"].startswith("size not given: 1280x704, 49 frames, the native size of Wan 2.2")


def _kv(capsys, *argv):
    try:
        rc = cli.main(["kv", *argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_weights_size_without_a_unit_is_refused_under_its_own_name(capsys):
    """`kv --weights-size 17.3` (the Hub's '17.3 GB' typed without its unit: 17 bytes) said "--weights-gib 1.58325e-08
    GiB is not a plausible weights size", a flag the user never gave and a figure they never typed."""
    rc, _, err = _kv(capsys, "--model", "Qwen/Qwen3-8B", "--weights-size", "17.3")
    assert rc == 2 and "--weights-gib" not in err, err
    assert "--weights-size '17.3' is 17 B: not a plausible weights size (64 MiB to 1 PiB)" in err
    assert "a number alone is bytes: give the unit the Hub lists, e.g. 17.3GB" in err
    rc, _, err = _kv(capsys, "--model", "Qwen/Qwen3-8B", "--weights-size", "10MB")  # a unit, too small: no unit hint
    assert rc == 2 and "--weights-size '10MB' is 9.54 MiB: not a plausible weights size" in err and "alone" not in err
    rc, out, _ = _kv(capsys, "--model", "Qwen/Qwen3-8B", "--weights-size", "17.3GB", "--json")  # with its unit: taken
    assert rc == 0 and json.loads(out)["weights_how"].startswith("as given")


def test_the_nvidia_smi_cap_does_not_read_as_the_card_s_total(capsys):
    """`estimate qwen-image --gpu-name "RTX 4090"` printed "nvidia-smi ~ 23.55 GiB, the card's total: 38.97 GiB would
    exceed it", which reads as a 38.97 GiB card two words after the verdict's 23.55 GiB (the RTX 4090 as torch
    reports it, cards.py)."""
    from support.cli_run import estimate, unwrap

    rc, out, _ = estimate(capsys, "qwen-image", "--gpu-name", "RTX 4090", "--ram", "64", "--dynamic-vram", "off")
    peak = next(x for x in unwrap(out).splitlines() if x.startswith("peak "))
    assert "the card's total:" not in peak, peak
    m = re.search(r"nvidia-smi ~ 23\.55 GiB, the whole card: the ([\d.]+) GiB figured is more than it holds", peak)
    assert m and float(m.group(1)) > 23.55, peak


def test_sequential_offload_does_not_print_its_sentinel_as_gib(capsys):
    """`estimate flux1 --offload sequential` listed "partial offload: 4294967296.00 GiB of the diffusion model stays in
    host RAM" (formula's 1 << 62 sentinel for 'every weight') beside the sequential note that says it right."""
    from support.cli_run import estimate

    for runner in ("comfyui", "diffusers"):
        rc, out, _ = estimate(capsys, "flux1", "--offload", "sequential", "--runner", runner, "--vram", "8",
                              "--ram", "64", "--dynamic-vram", "off", "--json")
        notes = json.loads(out)["assumptions"]
        assert not [a for a in notes if a.startswith("partial offload:") or "4294967296" in a], notes
        assert any(a.startswith("sequential offload: every model's weights stay in host RAM") for a in notes), notes


def test_the_verdict_line_says_does_not_fit_when_host_ram_decides(capsys):
    """`estimate flux1 --vram 24 --ram 4 --dynamic-vram off` printed "verdict: TIGHT in 24.00 GiB ..., headroom
    636.55 MiB (host RAM is short: ...)" and exited 1, its JSON outcome "does not fit": the verdict line is the outcome
    (README: the node's badge, the summary and the CLI's verdict line say the same). 9.26 GiB of text encoders kept
    for reload (T5-XXL 8.87 + CLIP-L 0.23 + ae 0.16, the component table) do not fit in 4 GiB of RAM."""
    from support.cli_run import estimate

    argv = ("flux1", "--vram", "24", "--ram", "4", "--dynamic-vram", "off")
    rc, out, _ = estimate(capsys, *argv)
    v = next(x for x in unwrap(out).splitlines() if x.startswith("verdict:"))
    assert rc == 1 and v.startswith("verdict: DOES NOT FIT: host RAM is short"), v
    assert re.search(r"; in VRAM alone TIGHT in 24\.00 GiB \(--vram\), headroom [\d.]+ MiB$", v), v  # VRAM's kept
    rc, out, _ = estimate(capsys, *argv, "--json")
    assert rc == 1 and json.loads(out)["outcome"]["status"] == "does not fit"
    rc, out, _ = estimate(capsys, "flux1", "--vram", "24", "--ram", "64", "--dynamic-vram", "off")  # RAM enough: as before
    v = next(x for x in unwrap(out).splitlines() if x.startswith("verdict:"))
    assert rc == 0 and re.fullmatch(r"verdict: TIGHT in 24\.00 GiB \(--vram\), headroom [\d.]+ MiB", v), v


def test_write_says_so_on_its_own_line_not_in_the_budget_label(tmp_path, capsys):
    """`estimate --workflow WF --models-dir DIR --write OUT --vram 8` printed "verdict: FITS in 8.00 GiB (--vram;
    written to OUT (extra.gpu_garden.memory)), headroom ..." (no GPU: "verdict: no budget (no GPU found; written to
    ...; pass --vram GIB ...)"), and its JSON budget_source read "--vram; written to OUT ...": the file written is
    no source of the budget."""
    from gpu_garden.memory.estimate import layouts
    from support.cli_run import run

    models = tmp_path / "models"
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", models / "checkpoints" / "sd15.safetensors")
    n = [{"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": ["sd15.safetensors"]},
         {"id": 2, "type": "EmptyLatentImage", "widgets_values": [512, 512, 1]}]
    wf = tmp_path / "wf.json"
    wf.write_text(json.dumps({"last_node_id": 2, "nodes": n, "links": [], "extra": {}, "version": 0.4}))
    target = tmp_path / "out.json"
    argv = ["estimate", "--workflow", str(wf), "--models-dir", str(models), "--vram", "8", "--write", str(target)]
    rc, out, err = run(argv, capsys)
    lines = out.splitlines()
    v = next(x for x in lines if x.startswith("verdict:"))
    assert rc == 0 and "written" not in v and v.startswith("verdict: FITS in 8.00 GiB (--vram), headroom"), v
    assert lines[-1] == f"written to {target} (extra.gpu_garden.memory)", lines[-3:]
    rc, j, err = run(argv + ["--json"], capsys)  # parsed by run
    assert rc == 0 and j["budget_source"] == "--vram" and j["written"] == str(target), err


def test_layouts_lists_the_families_in_one_column(capsys):
    """`estimate --layouts` padded family names to 14 characters: 'hunyuan-video-1.5' (17) pushed its layout out of
    the column the other families' layouts start in."""
    from support.cli_run import estimate

    rc, out, _ = estimate(capsys, "--layouts")
    lines = out.splitlines()
    fams = lines[1:lines.index(next(x for x in lines if x.startswith("layouts ")))]
    assert rc == 0 and "hunyuan-video-1.5" in out and len(fams) > 10
    starts = {len(x) - len(x[2:].split(" ", 1)[1].lstrip()) for x in fams}  # where the layout name begins
    assert len(starts) == 1, fams
