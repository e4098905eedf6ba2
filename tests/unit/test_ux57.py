"""Task ux57 (items a new-user run of the CLI left open, ux56's notes): each test fails on the code before its fix."""
import pytest

from support.cli_run import run, unwrap

QWEN_8 = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--ctx", "32768", "--parallel", "8", "--vram", "23.55"]


def test_kv_prints_the_command_of_the_cache_type_its_verdict_names(capsys):
    """The verdict said "holds only 4.03 of the 8 requests (--kv-cache-dtype fp8 holds 8.07)" and printed one command,
    with --kv-cache-dtype auto: the fp8 command is printed too, labelled, and the one as asked is labelled as asked."""
    rc, out, _ = run(QWEN_8, capsys)
    assert rc == 1  # --parallel 8 does not fit as asked (report.py run_cli)
    lines = unwrap(out).split("\n")
    asked = lines.index("as asked, f16 KV (holds 4.03 of the 8 requests):")
    assert lines[asked + 1] == ("  vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 32768 --max-num-seqs 8 "
                                "--kv-cache-dtype auto --gpu-memory-utilization 0.92")
    assert lines[asked + 2] == "with fp8 KV (holds 8.07 of the 8 requests):"
    assert lines[asked + 3] == ("  vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 32768 --max-num-seqs 8 "
                                "--kv-cache-dtype fp8 --gpu-memory-utilization 0.92")
    rc, j, _ = run(QWEN_8 + ["--json"], capsys)
    assert j["parallel_fix"]["command"] == lines[asked + 3].strip()
    assert "ev" not in j["parallel_fix"]


def test_kv_without_a_named_change_prints_one_unlabelled_command(capsys):
    """--parallel 4 fits as asked: no label, one command (the label is for a verdict that names a change)."""
    rc, out, _ = run(QWEN_8[:6] + ["4", "--vram", "23.55"], capsys)
    assert rc == 0
    assert "as asked" not in out and "with fp8 KV" not in out
    assert sum(line.startswith("  vllm serve ") for line in out.split("\n")) == 1


def _sglang(capsys, vram):
    rc, out, _ = run(["kv", "--model", "Qwen/Qwen3-8B", "--runtime", "sglang", "--vram", vram, "--ctx", "32768"], capsys)
    lines = unwrap(out).split("\n")
    return rc, next(x for x in lines if x.startswith("  python -m sglang.launch_server")), lines


def test_sglang_command_keeps_the_default_fraction_its_pool_is_quoted_at(capsys):
    """Qwen3-8B on 24 GiB: SGLang's default (#10975's reserve: 512 + 1.5 x 2048 + 2 x 24 + 1024 / 8 = 3760 MiB of
    24576, 0.847) holds one 32,768-token request (15.26 GiB of weights + 4.50 GiB of KV over 23.5 GiB free: 0.841); the
    command printed 0.85 (0.841 rounded up to 2 places) beside a pool quoted at 0.847."""
    rc, cmd, lines = _sglang(capsys, "24")
    assert rc == 0
    assert cmd.endswith(" --context-length 32768 --mem-fraction-static 0.847"), cmd
    assert ("note: SGLang would allocate a pool of 33,846 tokens (max_total_num_tokens) at --mem-fraction-static 0.847"
            in lines)


def test_sglang_command_still_raises_a_default_too_small_for_one_request(capsys):
    """On 23.55 GiB the default 0.844 leaves a 30,567-token pool: (15.26 + 4.50) / 23.05 = 0.857, so 0.86 is printed."""
    rc, cmd, _ = _sglang(capsys, "23.55")
    assert cmd.endswith(" --mem-fraction-static 0.86"), cmd


@pytest.mark.parametrize("argv", [
    ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", "vllm"],
    ["estimate", "flux1", "--ram", "64", "--dynamic-vram", "off"],
])
def test_gpu_is_gpu_name(capsys, argv):
    """`--gpu "RTX 4090"` was argparse's "ambiguous option: --gpu could match --gpu-memory-utilization, --gpu-name"
    (estimate: --gpu-name, --gpu-halves, --gpu-arch); it is now --gpu-name's alias: the same answer, on the 4090's
    23.55 GiB (memory/llm/cards.py), and both names in --help."""
    rc, out, err = run(argv + ["--gpu", "RTX 4090", "--json"], capsys)
    assert rc in (0, 1) and "ambiguous" not in err, err
    assert out == run(argv + ["--gpu-name", "RTX 4090", "--json"], capsys)[1]
    assert round((out.get("vram") or out.get("budget")) / 2**30, 2) == 23.55
    rc, text, _ = run([argv[0], "--help"], capsys)
    assert rc == 0 and "--gpu-name NAME, --gpu NAME" in text


@pytest.mark.parametrize("runtime,model,newer,newest", [
    ("vllm", "Qwen/Qwen2.5-7B-Instruct", "99.0.0", "vLLM 0.30.0"),
    ("sglang", "Qwen/Qwen2.5-7B-Instruct", "0.6.0", "SGLang 0.5.20"),
    ("ollama", "qwen2.5:7b", "99.0.0", "Ollama 0.34.2"),
    ("llama.cpp", "qwen2.5:7b", "b99999", "llama.cpp b11160"),
])
def test_a_version_past_the_newest_measured_says_which_rules_it_gets(capsys, runtime, model, newer, newest):
    """`--runtime-version 99.0.0` was taken silently as the newest rules: one note now names the release they are."""
    argv = ["kv", "--model", model, "--runtime", runtime, "--vram", "24", "--ctx", "8192", "--json"]
    notes = run(argv + ["--runtime-version", newer], capsys)[1]["notes"]
    said = [n for n in notes if "is newer than" in n]
    assert said == [f"runtime version {newer!r} is newer than {newest}, the newest "
                    f"{'build' if runtime == 'llama.cpp' else 'release'} kv's figures are checked against (its measured "
                    f"runs): read with {newest.split()[-1]}'s rules, the newest kv has; what later releases changed is "
                    "not modelled"], notes
    at = run(argv + ["--runtime-version", newest.split()[-1]], capsys)[1]["notes"]
    assert not [n for n in at if "is newer than" in n]


def test_the_newest_measured_versions_are_the_measured_rows_newest():
    """NEWEST_MEASURED names, for each runtime, a version some row of llm_measured.json ran, and no row ran a later one
    (a row of a newer release must move the table)."""
    import json
    from pathlib import Path

    from gpu_garden.memory.llm.runtimes import NEWEST_MEASURED, parse_version

    rows = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "llm_measured.json")
                      .read_text(encoding="utf-8"))["rows"]
    assert NEWEST_MEASURED == {"vllm": "0.30.0", "llama.cpp": "b11160", "ollama": "0.34.2", "sglang": "0.5.20"}
    for runtime, newest in NEWEST_MEASURED.items():
        ran = [r["version"] for r in rows if r.get("runtime") == runtime and r.get("version")]
        assert newest in ran
        for v in ran:
            try:
                got = parse_version(v, runtime)
            except Exception:  # a row's text that names no release (kv refuses it too)
                continue
            assert got is None or got <= parse_version(newest, runtime), (runtime, v)


def _fake_trace(monkeypatch):
    """trace's result without ComfyUI: _trace_family's fields format_result reads, the latent as build_case makes it."""
    from gpu_garden.memory.trace import comfy_checkout as cc

    def fake(comfyui_dir, family, width, height, *rest):
        return {"model": {"family": family, "phase": "sample", "class": "UNetModel", "dtype": "float16",
                          "latent": [2, 4, height // 8, width // 8], "note": "cond+uncond batched"},
                "peak": 2**30, "weights": 2**29, "activations_peak": 2**29, "inputs": 0, "at": {},
                "attention": {}, "allocator": {"allocated_peak": 2**30, "reserved_peak": 2**30, "segments": 1},
                "top": [], "ops": 1, "seconds": 0.0}
    monkeypatch.setattr(cc, "_trace_family", fake)


@pytest.mark.parametrize("phase", ["sample", "decode"])
def test_trace_notes_a_size_the_latent_node_rounds_as_estimate_does(monkeypatch, capsys, phase):
    """`trace --width 1001`: estimate says "1001x1024 is not a multiple of 8: ComfyUI's latent node rounds it down to
    1000x1024 (latent 125x128)"; trace (whose latent is width // 8 too) said nothing. Same words, one function."""
    _fake_trace(monkeypatch)
    said = "1001x1024 is not a multiple of 8: ComfyUI's latent node rounds it down to 1000x1024 (latent 125x128)"
    argv = ["trace", "--comfyui", "/nonexistent", "--family", "sdxl", "--width", "1001", "--height", "1024",
            "--phase", phase]
    rc, out, _ = run(argv, capsys)
    assert rc == 0 and "note: " + said in unwrap(out).split("\n")
    assert run(argv + ["--json"], capsys)[1]["notes"] == [said]
    rc, j, _ = run(["estimate", "sdxl", "--width", "1001", "--height", "1024", "--vram", "24", "--ram", "64",
                    "--json"], capsys)
    assert said in j["assumptions"]
    assert run(argv[:6] + ["1000"] + argv[7:] + ["--json"], capsys)[1]["notes"] == []  # 125 x 8: a multiple


def test_every_subcommand_s_json_has_help():
    """`--json` had no help text in any subcommand's --help: each now has cli_args.add_json's."""
    from gpu_garden.memory import cli

    subs = cli.build_parser()._subparsers._group_actions[0].choices
    assert sorted(subs) == ["budget", "demo", "estimate", "kv", "trace", "triage"]
    for name, sub in subs.items():
        action, = [a for a in sub._actions if "--json" in a.option_strings]
        assert action.help and action.help.endswith(
            'instead of text; an error is one JSON object too: {"error": ..., "kind": usage|input|io, "command": ...}'), name
