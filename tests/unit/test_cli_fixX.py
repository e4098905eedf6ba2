"""fixX: the CLI defects rev52's walk left open (/work/tools/s52/out/rev52.md, items A-K)."""
import json

import pytest

from gpu_garden.memory import cli
from support.cli_run import unwrap
from gpu_garden.memory.llm.cards import visible_gib

GiB = 1 << 30


def run(argv, capsys):
    rc = cli.main(argv)
    c = capsys.readouterr()
    return rc, unwrap(c.out), c.err  # term.py's wrapping undone: these pin whole lines


# F: consumer cards with a total, each the figure a corpus log's OOM message prints (the case file is named beside the
# entry in cards.py). Breaking it: drop the 3060 row (None), or put the 3060 Ti after the 3060 (it reads 11.75).
@pytest.mark.parametrize("name, gib", [
    ("NVIDIA GeForce RTX 3060", 11.75), ("RTX 3060 12GB", 11.75), ("RTX 3060 Ti", 8.00), ("RTX 3070", 7.66),
    ("RTX 3070 Ti", 7.66), ("RTX 3080", 9.64), ("RTX 4060", 7.60), ("RTX 4060 Ti 16GB", 15.60), ("RTX 4070", 11.99),
    ("RTX 4070 Ti", 11.58), ("RTX 4070 Ti SUPER", 15.99), ("RTX 5060 Ti", 15.47), ("RTX 5070", 11.50),
    ("RTX 5070 Ti", 15.47), ("AMD Radeon RX 7900 XTX", 23.98), ("AMD Radeon RX 9070 XT", 15.92),
    # variants with no log stay out, not read as their base card
    ("RTX 3080 12GB", None), ("RTX 3080 Ti", None), ("RTX 4060 Ti", None), ("RTX 4070 SUPER", None),
    ("RTX 5060 Ti 8GB", None), ("RTX 3060 Laptop GPU", None), ("RTX 4090", 23.55)])
def test_consumer_card_totals(name, gib):
    assert visible_gib(name) == gib


# F: an unknown card is a note and no verdict in both commands (docs/kv.md's wording), not an error in one of them.
# Breaking it: estimate's _budget raising UserError again (exit 2), or kv's _vram_bytes probing this machine's GPU.
def test_an_unknown_card_is_a_note_in_estimate_and_kv(capsys):
    rc, out, err = run(["estimate", "sdxl", "--gpu-name", "Voodoo 5", "--ram", "64"], capsys)
    assert rc == 0 and "verdict: no budget (--gpu-name 'Voodoo 5': no total known for this card" in out, err
    rc, out, err = run(["kv", "--model", "qwen3:8b", "--gpu-name", "Voodoo 5", "--json"], capsys)
    j = json.loads(out)
    assert rc == 0 and j["vram"] is None
    assert any("--gpu-name 'Voodoo 5': kv does not know this card's total memory" in n for n in j["notes"])


# F: "an NVIDIA", "an RTX 3060", "a GeForce". Breaking it: "for a {name}" back in llm/report.py.
@pytest.mark.parametrize("name, said", [("NVIDIA GeForce RTX 3060", "an NVIDIA GeForce RTX 3060"),
                                        ("RTX 3060", "an RTX 3060"), ("GeForce RTX 3060", "a GeForce RTX 3060")])
def test_article_before_the_card(name, said, capsys):
    for runtime in ("ollama", "vllm"):
        rc, out, err = run(["kv", "--model", "Qwen/Qwen3-8B", "--runtime", runtime, "--gpu-name", name], capsys)
        assert f"the total torch reports for {said}" in out, (runtime, out[-600:])


# A: a repo sized at a GGUF type under vLLM printed `vllm serve REPO` (its 16-bit weights, ~54 GB for the 27B), not the
# GGUF file that was sized. Breaking it: run_model.with_model without its gguf_file_of_repo branch.
@pytest.mark.parametrize("wd", ["UD-Q4_K_XL", "Q4_K_M"])
def test_vllm_serves_the_gguf_file_that_was_sized(wd, capsys):
    rc, out, err = run(["kv", "--model", "Qwen/Qwen3-8B", "--runtime", "vllm", "--weights-dtype", wd, "--vram", "12"], capsys)
    assert f"  vllm serve ./Qwen3-8B-{wd}.gguf --tokenizer Qwen/Qwen3-8B " in out, out[-800:]
    assert "vllm serve Qwen/Qwen3-8B " not in out.replace("`vllm serve Qwen/Qwen3-8B`", "")


# A: what is no GGUF type keeps the repo (16-bit, FP8) and a GGUF repo keeps its repo:TYPE form
@pytest.mark.parametrize("argv, serve", [
    (["--model", "Qwen/Qwen3-8B", "--weights-dtype", "bf16"], "vllm serve Qwen/Qwen3-8B "),
    (["--model", "Qwen/Qwen3-8B", "--weights-dtype", "fp8"], "vllm serve Qwen/Qwen3-8B "),
    (["--model", "unsloth/Qwen3-8B-GGUF:Q4_K_M"], "vllm serve unsloth/Qwen3-8B-GGUF:Q4_K_M --tokenizer Qwen/Qwen3-8B ")])
def test_vllm_serve_of_other_weights_unchanged(argv, serve, capsys):
    _, out, _ = run(["kv", "--runtime", "vllm", "--vram", "24"] + argv, capsys)
    assert serve in out and ".gguf --tokenizer" not in out


# D: a mistyped option was hidden by argparse's required-option error ("one of the arguments --config --gguf --model is
# required"). Breaking it: drop the _unknown_first call in cli._main (kv --modle then names the required group), or
# the difflib loop in _unrecognized (no "did you mean").
@pytest.mark.parametrize("argv, said", [
    (["kv", "--modle", "qwen3:8b"], "unrecognized arguments: --modle qwen3:8b; did you mean --model?"),
    (["kv", "--model", "qwen3:8b", "--vrma", "12"], "unrecognized arguments: --vrma 12; did you mean --vram?"),
    (["estimate", "sdxl", "--vrma", "12"], "unrecognized arguments: --vrma 12; did you mean --vram?"),
    (["triage", "--jsn", "x.log"], "unrecognized arguments: --jsn; did you mean --json?"),
    (["budget", "--wach", "2"], "unrecognized arguments: --wach 2; did you mean --watch?"),
    (["kv", "--foo"], "unrecognized arguments: --foo (see gpu-garden kv --help)")])
def test_a_mistyped_option_is_named_first(argv, said, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and said in err and "is required" not in err, err


# B: triage --json printed "limit": 18446744073709551616 (PyTorch's no-limit sentinel, 2^64) where the text says "no
# limit"; a JSON reader loses precision on it. Breaking it: print json.dumps(res) again in triage's run_cli (or return
# dict(res, ...) in demo_section).
def test_triage_json_no_limit_is_null(capsys):
    from pathlib import Path
    log = Path(cli.__file__).parent / "triage" / "samples" / "comfyui_vae_decode_oom.log"
    cli.main(["triage", str(log), "--json"])
    out = capsys.readouterr().out
    assert "18446744073709551616" not in out and '"limit": null' in out
    nums = json.loads(out)["events"][0]["numbers"]
    assert nums["limit"] is None and nums["device_limit"] == 6 * GiB  # a real cap stays a number
    cli.main(["triage", str(log)])
    assert "PyTorch limit: no limit (no memory fraction set)" in capsys.readouterr().out
    cli.main(["demo", "--json"])
    assert "18446744073709551616" not in capsys.readouterr().out


# I: Dynamic VRAM that fits in VRAM but is short of host RAM headlined "DOES NOT FIT in 12.00 GiB (--vram), headroom
# -11.38 GiB", a VRAM failure. Breaking it: drop report.py's host-RAM headline branch (the old line comes back).
def test_dynamic_vram_short_of_ram_headlines_host_ram(capsys):
    files = ["t5xxl_fp16.safetensors", "flux1-dev.safetensors", "clip_l.safetensors", "ae.safetensors"]
    rc, out, err = run(["estimate", *files, "--vram", "12", "--ram", "32", "--dynamic-vram", "on", "--weights-mmap", "off"],
                       capsys)
    line = next(x for x in out.splitlines() if x.startswith("verdict:"))
    assert rc == 1, err  # exit status as docs/estimate.md states: does not fit
    assert line.startswith("verdict: DOES NOT FIT in host RAM (32.00 GiB available), short by 10.80 GiB: the run needs "
                           "42.80 GiB of it"), line
    assert "in VRAM it fits: 12.00 GiB (--vram) with Dynamic VRAM streaming 11.38 GiB" in line and "headroom" not in line


# J: qwen-image's header said "CFG off / separate passes" while its assumption says CFG on, as separate passes.
# Breaking it: formula.py leaving cfg_separate False in the CFG-on-separate branch (the header reads "CFG off").
def test_cfg_on_in_separate_passes_is_said_so(capsys):
    _, out, _ = run(["estimate", "qwen-image"], capsys)
    assert out.splitlines()[0].endswith("CFG on, separate passes") and "CFG on as Qwen-Image" in out, out[:400]
    _, out, _ = run(["estimate", "qwen-image", "--no-cfg"], capsys)
    assert out.splitlines()[0].endswith("CFG off / separate passes")
    _, out, _ = run(["estimate", "sdxl"], capsys)
    assert out.splitlines()[0].endswith("CFG batched")


# K: a gzip file read as safetensors said "header length 7741253907624004383 bytes is impossible"; --batch 0 said
# "(got 1024x1024, 1 frames, batch 0)". Breaking them: drop the COMPRESSED look-up in headers.py, or check_args' loop.
def test_estimate_names_gzip(tmp_path, capsys):
    f = tmp_path / "x.log.gz"
    f.write_bytes(b"\x1f\x8b\x08\x00junkjunkjunk")
    rc, out, err = run(["estimate", str(f)], capsys)
    assert rc == 2 and "gzip-compressed" in err and "gpu-garden triage FILE" in err and "impossible" not in err, err


@pytest.mark.parametrize("n", ["0", "-2"])
def test_estimate_refuses_batch_below_one(n, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["estimate", "sdxl", "--batch", n])
    assert e.value.code == 2 and f"--batch needs a whole number of 1 or more (images at once), got {n}" in capsys.readouterr().err
