"""What a new user types at the command line (ux19): a runtime's own spelling of an option, and --help's exit codes."""
import pytest

from gpu_garden.memory import cli


def _usage_error(argv, capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_vllm_max_model_len_auto_says_what_to_type(capsys):
    # the kv output itself suggests "--max-model-len auto" to vLLM users; typed back into kv it was only "unrecognized"
    err = _usage_error(["kv", "--model", "qwen2.5:7b", "--runtime", "vllm", "--gpu-memory-utilization", "0.9",
                        "--max-model-len", "auto"], capsys)
    assert err.startswith("gpu-garden kv: error: unrecognized arguments: --max-model-len auto")
    assert "vLLM's --max-model-len is --ctx N here" in err
    assert "leave --ctx out" in err and "'largest context'" in err
    assert err.endswith("(see gpu-garden kv --help)")


def test_ctx_auto_says_what_to_type(capsys):
    err = _usage_error(["kv", "--model", "qwen2.5:7b", "--ctx", "auto"], capsys)
    assert "argument --ctx" in err and "leave --ctx out" in err and "'largest context'" in err


def test_ctx_not_a_number_is_still_refused(capsys):
    err = _usage_error(["kv", "--model", "qwen2.5:7b", "--ctx", "8k"], capsys)
    assert "not a whole number of tokens: '8k'" in err


def test_llama_server_flags_name_the_kv_options(capsys):
    err = _usage_error(["kv", "--model", "qwen2.5:7b", "--runtime", "llama.cpp", "-c", "65536", "-np", "4"], capsys)
    assert "unrecognized arguments: -c 65536 -np 4" in err
    assert "llama.cpp's -c is --ctx N here" in err and "llama.cpp's -np is --parallel N here" in err


def test_a_length_given_with_equals_gets_no_auto_hint(capsys):
    err = _usage_error(["kv", "--model", "qwen2.5:7b", "--max-model-len=8192"], capsys)
    assert "is --ctx N here" in err and "leave --ctx out" not in err


def test_comfyui_launch_flags_name_the_estimate_options(capsys):
    err = _usage_error(["estimate", "model.safetensors", "--fp32-vae"], capsys)
    assert "ComfyUI's --fp32-vae is --vae-dtype fp32 here" in err and err.startswith("gpu-garden estimate: error:")


def test_an_unknown_argument_names_the_subcommand_help(capsys):
    err = _usage_error(["triage", "a.log", "b.log"], capsys)
    assert err == "gpu-garden triage: error: unrecognized arguments: b.log (see gpu-garden triage --help)"
    err = _usage_error(["kv", "--model", "qwen2.5:7b", "--frobnicate"], capsys)
    assert err == "gpu-garden kv: error: unrecognized arguments: --frobnicate (see gpu-garden kv --help)"


def test_every_suggested_option_exists():
    parser = cli.build_parser()
    sub = parser._subparsers._group_actions[0].choices
    for command, table in cli.RUNTIME_SPELLINGS.items():
        options = {o for a in sub[command]._actions for o in a.option_strings}
        for spelling, (instead, _) in table.items():
            assert instead.split()[0] in options, (command, spelling, instead)
            assert spelling not in options, (command, spelling)


@pytest.mark.parametrize("command,codes", [
    ("kv", ("0 it fits", "1 no flags hold --ctx", "2 usage")),
    ("triage", ("0 an out-of-memory error was found", "1 none was found", "2 a missing file")),
    ("estimate", ("0 it runs on the budget", "1 it does not fit", "2 usage")),
])
def test_help_gives_the_exit_status(command, codes, capsys):
    # README: "Exit code 0 when an out-of-memory error was found, 1 when none" (triage), "Exit code 1 when it does not
    # fit" (kv); only estimate --help said so
    with pytest.raises(SystemExit) as e:
        cli.main([command, "--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "exit status:" in out
    for code in codes:
        assert code in out, (command, code)


OOM_LOG = (b"loading model\n"
           b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
           b"11.76 GiB of which 10.69 MiB is free.\n")


def _gzip(data):
    import gzip
    return gzip.compress(data)


def _zip(data):
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("comfyui.log", data)
    return buf.getvalue()


@pytest.mark.parametrize("name,pack,reader", [("comfyui.log.1.gz", _gzip, "zcat"), ("logs.zip", _zip, "unzip -p")])
def test_triage_of_a_compressed_log_says_to_decompress_it(name, pack, reader, tmp_path, capsys):
    # before: "No out-of-memory error found (N lines read)." and exit 1, although the archive holds an OOM
    f = tmp_path / name
    f.write_bytes(pack(OOM_LOG))
    assert cli.main(["triage", str(f)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "compressed, not a text log" in err
    assert f"{reader} {f} | gpu-garden triage -" in err


def test_triage_of_compressed_standard_input_says_to_decompress_it(monkeypatch, capsys):
    import io
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(_gzip(OOM_LOG)))))
    assert cli.main(["triage", "-"]) == 2
    assert "standard input is gzip-compressed" in capsys.readouterr().err


def test_triage_of_a_text_log_that_starts_like_a_magic_number_is_read(tmp_path, capsys):
    f = tmp_path / "a.log"
    f.write_bytes(b"PK sampler step 1\n" + OOM_LOG)  # "PK" without the zip header's \x03\x04
    assert cli.main(["triage", str(f)]) == 0
    assert "line 3" in capsys.readouterr().out


def test_triage_reads_a_file_from_its_first_byte_after_the_compression_check(tmp_path, capsys):
    import json
    f = tmp_path / "first.log"
    f.write_bytes(OOM_LOG.split(b"\n", 1)[1])  # the OOM on line 1: the 8 bytes looked at are read again
    assert cli.main(["triage", "--json", str(f)]) == 0
    event = json.loads(capsys.readouterr().out)["events"][0]
    assert event["line"] == 1 and event["message"].startswith("torch.OutOfMemoryError: CUDA out of memory.")


@pytest.mark.parametrize("flag,typed,read", [("--weights-dtype", "FP8", "fp8"), ("--weights-dtype", "Q8_0", "q8_0"),
                                             ("--vae-dtype", "FP32", "fp32")])
def test_estimate_dtypes_are_read_in_any_case(flag, typed, read):
    # a GGUF file is named flux1-dev-Q8_0.gguf, and kv takes --weights-dtype Q4_K_M; estimate refused 'Q8_0' and 'FP8'
    args = cli.build_parser().parse_args(["estimate", "model.safetensors", flag, typed])
    assert getattr(args, flag[2:].replace("-", "_")) == read


def test_estimate_dtype_outside_the_choices_is_still_refused(capsys):
    err = _usage_error(["estimate", "model.safetensors", "--weights-dtype", "Q4_K_M"], capsys)
    assert "invalid choice: 'q4_k_m'" in err and "'q4_k'" in err


@pytest.mark.parametrize("typed", ["llama-server", "Llama-Server", "llama.cpp"])
def test_kv_runtime_llama_server_is_llama_cpp(typed):
    # the README's llama.cpp examples run llama-server; '--runtime llama-server' was 'invalid choice'
    args = cli.build_parser().parse_args(["kv", "--model", "qwen2.5:7b", "--runtime", typed])
    assert args.runtime == "llama.cpp"


def test_triage_of_a_pipe_given_as_a_path(tmp_path, capsys):
    # `gpu-garden triage <(journalctl -u ollama)` names /dev/fd/N, a pipe: the compression check must not seek back
    # (798d2e5 read 8 bytes and seek(0): "File or stream is not seekable", exit 2)
    import os
    import threading
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(OOM_LOG))
    writer.start()
    try:
        assert cli.main(["triage", str(fifo)]) == 0
    finally:
        writer.join(timeout=10)
    assert "line 2" in capsys.readouterr().out


@pytest.mark.parametrize("bom,codec", [(b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")])
def test_triage_of_a_utf16_log(bom, codec, tmp_path, capsys):
    # PowerShell 5's `python main.py > comfyui.log` writes UTF-16LE with a BOM and CRLF: read as bytes, every character
    # was followed by a NUL and triage said "No out-of-memory error found", exit 1
    import json
    f = tmp_path / "comfyui.log"
    f.write_bytes(bom + OOM_LOG.decode().replace("\n", "\r\n").encode(codec))
    assert cli.main(["triage", "--json", str(f)]) == 0
    res = json.loads(capsys.readouterr().out)
    event = res["events"][0]
    assert event["line"] == 2 and event["numbers"]["requested"] == 20 * 2**20
    assert event["message"].startswith("torch.OutOfMemoryError: CUDA out of memory.")


def test_triage_of_a_utf16_log_on_standard_input(monkeypatch, capsys):
    import io
    data = b"\xff\xfe" + OOM_LOG.decode().replace("\n", "\r\n").encode("utf-16-le")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    assert cli.main(["triage", "-"]) == 0
    assert "line 2" in capsys.readouterr().out


def test_kv_on_a_diffusion_model_file_points_to_estimate(tmp_path, capsys):
    # a ComfyUI-GGUF FLUX file or an SDXL checkpoint given to kv: the error named missing keys but not the command
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
    from gguf_files import sparse_gguf_from_layout
    gguf, _ = sparse_gguf_from_layout(tmp_path / "flux1-dev-Q8_0.gguf")
    err = _usage_error_main(["kv", "--gguf", str(gguf)], capsys)
    assert "architecture 'flux'" in err and "gpu-garden estimate FILE" in err
    st = tmp_path / "model.safetensors"
    header = b'{"first_stage_model.decoder.conv_in.weight": {"dtype": "F16", "shape": [512, 4, 3, 3], "data_offsets": [0, 36864]}}'
    header += b" " * (-len(header) % 8)
    st.write_bytes(len(header).to_bytes(8, "little") + header + bytes(36864))
    err = _usage_error_main(["kv", "--config", str(st)], capsys)
    assert "no decoder layers" in err and "gpu-garden estimate FILE" in err


def _usage_error_main(argv, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("argv,number", [
    (["kv", "--model", "qwen2.5:7b", "--vram", "24GB"], "24"),
    (["kv", "--model", "qwen2.5:7b", "--vram", "23.55 GiB"], "23.55"),
    (["estimate", "model.safetensors", "--vram", "12G"], "12"),
    (["estimate", "model.safetensors", "--ram", "64GB"], "64"),
    (["estimate", "model.safetensors", "--reserve-vram", "1gb"], "1"),
])
def test_a_size_with_its_unit_says_to_give_the_number(argv, number, capsys):
    # '--vram 24GB' was "invalid float value: '24GB'"
    err = _usage_error(argv, capsys)
    assert f"give the number alone, in GiB: {number} " in err


@pytest.mark.parametrize("flag", ["--vram", "--ram", "--reserve-vram"])
def test_gib_options_still_read_a_plain_number(flag):
    args = cli.build_parser().parse_args(["estimate", "model.safetensors", flag, "12.5"])
    assert getattr(args, flag[2:].replace("-", "_")) == 12.5
    args = cli.build_parser().parse_args(["kv", "--model", "qwen2.5:7b", "--vram", "23.55"])
    assert args.vram == 23.55


def test_a_word_is_not_a_number_of_gib(capsys):
    err = _usage_error(["kv", "--model", "qwen2.5:7b", "--vram", "lots"], capsys)
    assert "not a number of GiB: 'lots'" in err


def test_a_non_finite_number_names_the_subcommand(capsys):
    # the finite check called the top-level parser's error: "gpu-garden: error: ... (see gpu-garden --help)"
    err = _usage_error(["kv", "--model", "qwen2.5:7b", "--vram", "nan"], capsys)
    assert err == "gpu-garden kv: error: --vram must be a finite number, got nan (see gpu-garden kv --help)"


def test_kv_config_of_a_folder_without_a_model_says_so(tmp_path, capsys):
    # the folder exists: "no such file" sent the user looking for a typo in its name
    (tmp_path / "notes.txt").write_text("x")
    err = _usage_error_main(["kv", "--config", str(tmp_path)], capsys)
    assert "neither config.json nor .safetensors files" in err and "no such file" not in err
    err = _usage_error_main(["kv", "--config", str(tmp_path / "missing")], capsys)
    assert err.endswith("missing: no such file")


def test_kv_config_json_missing_in_an_existing_folder_is_no_such_file(tmp_path, capsys):
    err = _usage_error_main(["kv", "--config", str(tmp_path / "config.json")], capsys)
    assert err.endswith("config.json: no such file")


def test_estimate_workflow_that_is_a_folder_and_models_dir_that_is_a_file(tmp_path, capsys):
    # both existed and were called missing: "no such workflow file", "no such folder"
    wf = tmp_path / "wf.json"
    wf.write_text('{"1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "a.safetensors"}}}')
    model = tmp_path / "a.safetensors"
    model.write_bytes(b"x")
    err = _usage_error_main(["estimate", "--workflow", str(tmp_path), "--models-dir", str(tmp_path)], capsys)
    assert "is a directory, not a workflow file" in err
    err = _usage_error_main(["estimate", "--workflow", str(wf), "--models-dir", str(model)], capsys)
    assert "a file, not a folder" in err
    err = _usage_error_main(["estimate", "--workflow", str(wf), "--models-dir", str(tmp_path / "nope")], capsys)
    assert "no such folder" in err
    err = _usage_error_main(["estimate", "--workflow", str(tmp_path / "nope.json"), "--models-dir", str(tmp_path)], capsys)
    assert "no such workflow file" in err


@pytest.mark.parametrize("data,said", [(b"", "No out-of-memory error found: the input is empty (0 lines)."),
                                       (b"one line, no newline", "No out-of-memory error found (1 line read)."),
                                       (b"a\nb\n", "No out-of-memory error found (2 lines read).")])
def test_triage_without_an_oom_says_how_much_it_read(data, said, tmp_path, capsys):
    # an empty file said "(0 lines read)" and one line "(1 lines read)"
    f = tmp_path / "x.log"
    f.write_bytes(data)
    assert cli.main(["triage", str(f)]) == 1
    assert capsys.readouterr().out.strip() == said
