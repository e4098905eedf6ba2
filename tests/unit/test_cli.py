import json
import subprocess
import sys

import pytest

from gpu_garden.memory import cli


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for name in cli.COMMANDS:
        assert name in out


def test_no_command_is_usage_error(capsys):
    # (mend56) it printed the whole help on stdout and returned 2: through the console script (sys.exit(main())) a
    # failing run with output on stdout and nothing on stderr. Now argparse's way, as every other usage error
    with pytest.raises(SystemExit) as e:
        cli.main([])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("gpu-garden: error: give a COMMAND: demo, budget, estimate, triage, kv, trace "
                                 "(see gpu-garden --help)\n")


@pytest.mark.parametrize("argv", [["estimate"], ["budget", "--watch", "x"], ["nope"], ["kv"]])
def test_usage_errors_are_one_line_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "error" in err and "Traceback" not in err


def test_every_subcommand_accepts_json():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, type(parser._subparsers._group_actions[0])))
    for name, p in sub.choices.items():
        assert any("--json" in a.option_strings for a in p._actions), name


def test_user_error_is_one_line_exit_2(tmp_path, capsys):
    missing = tmp_path / "nope.log"
    assert cli.main(["triage", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def _installed() -> bool:
    code = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('gpu_garden') else 1)"
    return subprocess.run([sys.executable, "-c", code], cwd="/").returncode == 0


@pytest.mark.skipif(not _installed(), reason="gpu_garden is not pip-installed in this interpreter (scripts/test.sh installs it)")
def test_installed_demo_runs_and_json_is_valid():
    res = subprocess.run([sys.executable, "-m", "gpu_garden", "demo"], capture_output=True, text=True, cwd="/", timeout=120)
    assert res.returncode == 0, res.stderr
    assert "budget" in res.stdout.lower()
    res = subprocess.run([sys.executable, "-m", "gpu_garden", "demo", "--json"], capture_output=True, text=True, cwd="/", timeout=120)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert {"budget", "estimate", "triage"} <= set(data)


@pytest.mark.parametrize("argv", [["estimate", "--workflow", "{f}", "--models-dir", "{d}"], ["kv", "--config", "{f}"]])
def test_json_nested_too_deep_is_one_line_exit_2(argv, tmp_path, capsys):
    """json.loads raises RecursionError on 100,000 nested arrays: a clear error, not a traceback (exit 1)."""
    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    assert cli.main([a.format(f=f, d=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "nested too deeply" in err


def test_triage_from_a_terminal_says_it_waits_for_a_pasted_log(monkeypatch, capsys):
    """`gpu-garden triage` with no FILE reads standard input; at a terminal it says so instead of waiting silently."""
    import io

    class Tty(io.TextIOWrapper):
        def isatty(self):
            return True

    monkeypatch.setattr("sys.stdin", Tty(io.BytesIO(b"")))
    assert cli.main(["triage"]) == 1
    err = capsys.readouterr().err
    assert "standard input" in err and "Ctrl-D" in err


def test_triage_from_a_pipe_prints_no_hint(monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"no error here\n")))
    assert cli.main(["triage"]) == 1
    assert capsys.readouterr().err == ""


def test_an_unwritable_output_path_is_one_line_exit_2(tmp_path, capsys):
    """estimate --write into a folder that does not exist: the path and the reason on one line, not a traceback."""
    import struct

    header = json.dumps({"model.diffusion_model.x.weight": {"dtype": "F16", "shape": [64, 64], "data_offsets": [0, 8192]}}).encode()
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "m.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(8192))
    wf = {"nodes": [{"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": ["m.safetensors"]},
                    {"id": 2, "type": "EmptyLatentImage", "widgets_values": [512, 512, 1]}], "links": []}
    (tmp_path / "wf.json").write_text(json.dumps(wf))
    out = tmp_path / "missing" / "out.json"
    rc = cli.main(["estimate", "--workflow", str(tmp_path / "wf.json"), "--models-dir", str(tmp_path), "--write", str(out)])
    err = capsys.readouterr().err.strip()
    assert rc == 2
    assert len(err.splitlines()) == 1 and "Traceback" not in err and str(out) in err


@pytest.mark.parametrize("argv", [["kv", "--model", "Qwen3-8B", "--vram", "nan"], ["kv", "--model", "Qwen3-8B", "--vram", "inf"],
                                  ["estimate", "x.safetensors", "--width", "512", "--height", "512", "--vram", "inf"],
                                  ["estimate", "x.safetensors", "--width", "512", "--height", "512", "--reserve-vram", "nan"]])
def test_nan_and_infinity_are_usage_errors(argv, capsys):
    """float() takes 'nan' and 'inf'; int(nan) then raised a ValueError traceback (exit 1). No option means either."""
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "finite" in err and "Traceback" not in err


@pytest.mark.parametrize("flag, value", [("--kv-cache-memory", "-1"), ("--max-num-seqs", "0"), ("--max-num-batched-tokens", "-100"),
                                         ("--ubatch", "0"), ("--num-gpus", "0")])
def test_kv_counts_and_sizes_must_be_positive(flag, value, capsys):
    """--kv-cache-memory -1 planned a 0 B KV pool; 0 for a count was read as 'not given'."""
    with pytest.raises(SystemExit) as e:
        cli.main(["kv", "--model", "Qwen3-8B", "--vram", "24", flag, value])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and flag in err and "positive" in err


# Under --json an error is also one JSON object on stdout, {"error", "kind", "command"}, so `| python -m json.tool`
# reads it (ux50 D); stderr keeps its one line, the exit code is unchanged. Each subcommand's own error, the parser's,
# an unrecognized option, a non-finite number and estimate's in-run usage check. Breaking it: cli._report_error without
# its print to stdout, or main() without its _UsageExit handler (stdout empty: json.loads fails).
JSON_ERRORS = [
    (["budget", "--watch", "-1"], "input", "budget", "--watch needs a positive number"),
    (["estimate", "/nonexistent/model.safetensors"], "input", "estimate", "/nonexistent/model.safetensors: no such file"),
    (["triage", "/nonexistent/run.log"], "input", "triage", "no such file: /nonexistent/run.log"),
    (["kv", "--model", "./nonexistent.gguf"], "input", "kv", "./nonexistent.gguf: no such file or folder"),
    (["trace", "--comfyui", "/nonexistent", "--family", "nope", "--width", "64", "--height", "64"], "input", "trace",
     "unknown family 'nope'"),
    (["kv", "--model", "qwen2.5:7b", "--vram", "24GB"], "usage", "kv", "argument --vram: '24GB'"),
    (["estimate", "m.safetensors", "--frobnicate"], "usage", "estimate", "unrecognized arguments: --frobnicate"),
    (["estimate", "m.safetensors", "--vram", "nan"], "usage", "estimate", "--vram must be a finite number"),
    (["estimate", "m.safetensors", "--width", "512"], "usage", "estimate", "--width and --height go together"),
    (["nope"], "usage", None, "invalid choice: 'nope'"),
]


def _run_main(argv, capsys):
    try:
        rc = cli.main(argv)
    except SystemExit as e:                       # argparse's way for a usage error: exit 2 all the same
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("argv,kind,command,text", JSON_ERRORS, ids=[" ".join(a[0][:2]) for a in JSON_ERRORS])
def test_errors_under_json_are_one_json_object_on_stdout(argv, kind, command, text, capsys):
    rc, out, err = _run_main(argv + ["--json"], capsys)
    assert rc == 2
    assert json.loads(out) == {"error": err.strip().split(": error: ", 1)[1], "kind": kind, "command": command}
    assert text in json.loads(out)["error"] and len(out.strip().splitlines()) == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    rc, plain_out, plain_err = _run_main(argv, capsys)          # without --json: stderr alone, as before
    assert (rc, plain_out, plain_err) == (2, "", err)


@pytest.mark.parametrize("exc,kind,message", [
    (OSError(2, "No such file or directory", "/nonexistent/out.json"), "io", "No such file or directory: /nonexistent/out.json"),
    (RecursionError(), "input", "the input is nested too deeply to read"),
])
def test_io_and_nesting_errors_under_json(exc, kind, message, monkeypatch, capsys):
    from gpu_garden.memory import demo

    def fail(args):
        raise exc
    monkeypatch.setattr(demo, "run_cli", fail)
    rc, out, err = _run_main(["demo", "--json"], capsys)
    assert rc == 2 and json.loads(out)["kind"] == kind and json.loads(out)["error"].startswith(message)
    assert json.loads(out)["command"] == "demo" and err.startswith("gpu-garden demo: error: " + message)
