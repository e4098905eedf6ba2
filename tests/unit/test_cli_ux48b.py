"""A new user's walk through the CLI, second round (ux48b): each test names what the command did before its fix."""
import json
import os

import pytest

from gpu_garden.memory.estimate import layouts, workflow
from support.cli_run import run, unwrap


@pytest.fixture(scope="module")
def sd15_models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    return d


def _sd15_workflow(path):
    n = [{"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": ["sd15.safetensors"]},
         {"id": 2, "type": "EmptyLatentImage", "widgets_values": [512, 512, 1]},
         {"id": 3, "type": "KSampler", "widgets_values": [1, "fixed", 20, 7.0, "euler", "normal", 1.0]},
         {"id": 4, "type": "VAEDecode", "widgets_values": []}]
    path.write_text(json.dumps({"last_node_id": 4, "nodes": n, "links": [], "extra": {}, "version": 0.4}))
    return path


def _write(tmp_path, models, target, capsys):
    wf = _sd15_workflow(tmp_path / "sd15_ui.json")
    return run(["estimate", "--workflow", str(wf), "--models-dir", str(models), "--vram", "8", "--write", str(target)], capsys)


# estimate --workflow sd15_ui.json --write ae.safetensors replaced a 335 MB VAE with the workflow's few KB of JSON
@pytest.mark.parametrize("name,content", [("ae.safetensors", b"\x08\x00\x00\x00\x00\x00\x00\x00{}      "),
                                          ("ae.safetensors", None),  # a model file's name is refused even when new
                                          ("model.gguf", b"GGUF\x03\x00\x00\x00"),
                                          ("weights.json", bytes(range(256)) * 4),
                                          ("config.json", b'{"model_type": "llama", "num_hidden_layers": 32}'),
                                          ("list.json", b"[1, 2, 3]")])
def test_write_never_replaces_what_is_not_a_workflow(name, content, sd15_models, tmp_path, capsys):
    target = tmp_path / name
    if content is not None:
        target.write_bytes(content)
    rc, out, err = _write(tmp_path, sd15_models, target, capsys)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1
    assert f"--write {target}: nothing written" in err
    assert (target.read_bytes() == content) if content is not None else not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["sd15_ui.json"] + ([name] if content is not None else []))


def test_write_replaces_a_workflow_and_writes_a_new_file(sd15_models, tmp_path, capsys):
    old = _sd15_workflow(tmp_path / "old.json")
    for target in (old, tmp_path / "new.json", tmp_path / "sd15_ui.json"):  # a workflow, a new file, the input itself
        rc, out, err = _write(tmp_path, sd15_models, target, capsys)
        assert rc == 0 and f"written to {target}" in out, err
        assert json.loads(target.read_text())["extra"]["gpu_garden"]["memory"]["family"] == "sd1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json", "old.json", "sd15_ui.json"]  # no temporary left


def test_write_is_atomic(sd15_models, tmp_path, capsys, monkeypatch):
    target = _sd15_workflow(tmp_path / "shared.json")
    target.chmod(0o640)
    before = target.read_bytes()
    link = tmp_path / "link.json"
    os.link(target, link)  # a file written in place changes under every name; one renamed over leaves the old inode
    rc, _, err = _write(tmp_path, sd15_models, target, capsys)
    assert rc == 0, err
    assert link.read_bytes() == before and target.read_bytes() != before
    assert target.stat().st_mode & 0o777 == 0o640
    # a failure before the rename (a crash, a full disk) leaves the old file whole and no temporary beside it
    link.unlink()
    before = target.read_bytes()

    def fail(*a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(workflow.os, "replace", fail)
    rc, _, err = _write(tmp_path, sd15_models, target, capsys)
    assert rc == 2 and "No space left on device" in err
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sd15_ui.json", "shared.json"]


# kv --config DIR on a folder of a diffusion model's files (FLUX, its T5 and CLIP-L) planned "12 layers (12 full), 6 KV
# heads x 128, 31.51 GiB" (with Wan, UMT5, SD3.5, CLIP-G and SDXL files beside them: 32 layers, 10 KV heads): CLIP's
# text_model.encoder.layers.N. and T5's encoder.embed_tokens were read as one decoder
@pytest.fixture(scope="module")
def diffusion_folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("flux_files")
    for name in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l"):
        layouts.write_sparse(name, d / f"{name}.safetensors")
    return d


@pytest.mark.parametrize("flag", ["--config", "--model"])
def test_kv_refuses_a_folder_of_diffusion_files(flag, diffusion_folder, capsys):
    rc, out, err = run(["kv", flag, str(diffusion_folder), "--vram", "24"], capsys)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1
    assert "no LLM decoder here" in err and "encoder.embed_tokens.weight" in err and "text_model.encoder.layers.N." in err


def test_a_decoder_beside_a_text_encoder_is_read_from_its_own_layers():
    from gpu_garden.memory.llm.files import from_tensor_table
    d, kv, L = 512, 128, 4
    llm = {"model.embed_tokens.weight": ("BF16", (1000, d))}
    for i in range(L):
        llm.update({f"model.layers.{i}.self_attn.{p}_proj.weight": ("BF16", (kv if p in "kv" else d, d)) for p in "qkvo"})
    s = from_tensor_table({**llm, **layouts.table("te_clip_l")}, name="mixed")  # CLIP's 12 layers named last
    assert s.n_layers == L and s.layer_kv_elems == [2 * kv] * L and s.hidden == d


def _weights_alone(argv, capsys):
    rc, out, err = run(["kv", *argv], capsys)
    assert rc == 1, err
    return next(line for line in unwrap(out).splitlines() if line.startswith("Weights alone ("))  # as written, unwrapped


def _awq_gib(line):
    import re
    return float(re.search(r"AWQ/GPTQ 4-bit ~([\d.]+) GiB", line).group(1))


# kv --model deepseek-ai/DeepSeek-V3 --vram 80 --tensor-parallel-size 8 offered 'AWQ/GPTQ 4-bit ~327.38 GiB, fp8': the
# whole model's 4-bit size beside one GPU's 79.36 GiB, and fp8, the checkpoint's own format. By hand: 669.07 B matmul
# parameters at 4.16 bits and 1.96 B at 16 are 327.7 GiB, an eighth 40.96 GiB; the MLA down-projections kept whole on
# every GPU (770.60 MiB at fp8) add under 1 GiB
def test_kv_offers_one_gpus_quantized_size_under_tensor_parallelism(capsys):
    line = _weights_alone(["--model", "deepseek-ai/DeepSeek-V3", "--vram", "80", "--tensor-parallel-size", "8"], capsys)
    assert line.startswith("Weights alone (79.36 GiB)")
    assert 40.9 <= _awq_gib(line) <= 42.0 and "GiB a GPU" in line
    assert "fp8" not in line


def test_kv_offers_one_gpus_quantized_size_under_pipeline_parallelism(capsys):
    # TP 4 x PP 2 on 40 GiB: the reason said 'Weights alone (157.83 GiB)' (the TP share of all 61 layers, no GPU's) and
    # '~327.38 GiB'; a GPU holds at most one stage: about half the TP share, 4-bit about 327.7 / 8 = 41 GiB
    line = _weights_alone(["--model", "deepseek-ai/DeepSeek-V3", "--vram", "40", "--tensor-parallel-size", "4",
                           "--pipeline-parallel-size", "2"], capsys)
    assert "on the pipeline stage with the most:" in line
    assert 78.9 < float(line.split("(")[1].split(" GiB")[0]) < 90  # half of 157.83, the last stage a little more
    assert 40.9 <= _awq_gib(line) <= 47.0 and "fp8" not in line


def test_kv_never_offers_the_models_own_format_or_a_wider_one(capsys):
    one_gpu = _weights_alone(["--model", "deepseek-ai/DeepSeek-V3", "--vram", "80"], capsys)  # an fp8 checkpoint
    assert "AWQ/GPTQ 4-bit ~" in one_gpu and "fp8" not in one_gpu and "a GPU" not in one_gpu
    awq = _weights_alone(["--model", "Qwen/Qwen3-8B", "--vram", "3", "--weights-dtype", "awq"], capsys)
    assert "quantized checkpoint" not in awq and awq.endswith("use --tensor-parallel-size over more GPUs")
    bf16 = _weights_alone(["--model", "Qwen/Qwen3-8B", "--vram", "12"], capsys)  # both narrower: both offered
    assert "(AWQ/GPTQ 4-bit ~5.68 GiB, fp8)" in bf16


# truncate -s 100M z; gpu-garden triage z said 'the input is empty (0 lines)' of 100 MB of NULs
def test_triage_of_nul_bytes_says_no_text_not_empty(tmp_path, capsys):
    z = tmp_path / "z"
    with open(z, "wb") as f:
        f.truncate(3 << 20)  # 3 MiB, sparse: 3 x 1,048,576 bytes
    rc, out, _ = run(["triage", str(z)], capsys)
    assert rc == 1 and out.strip() == "No out-of-memory error found: no text in it: 3,145,728 bytes, none printable."
    rc, res, _ = run(["triage", str(z), "--json"], capsys)
    assert rc == 1 and res["no_text"] is True and res["bytes"] == 3 << 20
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "one.log").write_bytes(b"\x00\x00server started\n")
    assert run(["triage", str(tmp_path / "empty.log")], capsys)[1].strip().endswith("the input is empty (0 lines).")
    rc, res, _ = run(["triage", str(tmp_path / "one.log"), "--json"], capsys)
    assert rc == 1 and "no_text" not in res and res["lines"] == 1


# gpu-garden estimate tiny-llama.gguf (an LLM) and a safetensors with an empty header both said '--width and --height
# are needed: no diffusion model among the files'
def test_estimate_of_an_llm_alone_points_to_kv(tmp_path, capsys):
    pytest.importorskip("gguf")
    from support.gguf_files import tiny_llama_q8
    f = tiny_llama_q8(tmp_path / "tiny-llama.gguf")
    rc, out, err = run(["estimate", str(f)], capsys)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1
    assert f"tiny-llama.gguf is an LLM: for the memory to serve it, gpu-garden kv --gguf {f};" in err
    rc, _, err = run(["estimate", str(f), "--width", "512", "--height", "512"], capsys)  # a text encoder with a size: as before
    assert rc in (0, 1), err


def test_estimate_of_a_text_encoder_alone_still_asks_for_the_size(tmp_path, capsys):
    t5 = layouts.write_sparse("te_t5xxl_fp16", tmp_path / "t5xxl_fp16.safetensors")
    rc, _, err = run(["estimate", str(t5)], capsys)
    assert rc == 2 and "no diffusion model among the files (see" in err and "kv" not in err


@pytest.mark.parametrize("header", [b"{}", b'{"__metadata__": {"format": "pt"}}'])
def test_estimate_of_a_file_with_no_tensors_says_so(header, tmp_path, capsys):
    f = tmp_path / "empty.safetensors"
    blob = header + b" " * (-len(header) % 8)
    f.write_bytes(len(blob).to_bytes(8, "little") + blob)
    vae = layouts.write_sparse("vae_flux_ae", tmp_path / "ae.safetensors")
    for argv in ([str(f)], [str(f), str(vae), "--width", "512", "--height", "512"]):
        rc, out, err = run(["estimate", *argv], capsys)
        assert rc == 2 and out == "" and err.strip() == f"gpu-garden estimate: error: {f}: holds no tensors (its header lists none): not a model file to estimate"


# estimate --vram 100000 judged 'FITS in 100000.00 GiB' and --vram 0.1 'DOES NOT FIT in 102.40 MiB', where kv refused
# 0.1 (under 256 MiB) and took 100000 too (its top was 1 PiB): one range now, 256 MiB to 4096 GiB of one GPU
@pytest.mark.parametrize("vram,ok", [("0.1", False), ("0.25", True), ("4096", True), ("4097", False), ("100000", False)])
def test_estimate_and_kv_share_one_vram_range(vram, ok, sd15_models, capsys):
    ckpt = str(sd15_models / "checkpoints" / "sd15.safetensors")
    for argv in (["estimate", ckpt, "--vram", vram], ["kv", "--model", "Qwen/Qwen3-8B", "--vram", vram]):
        rc, out, err = run(argv, capsys)
        if ok:
            assert rc in (0, 1) and out, err
        else:
            assert rc == 2 and out == "" and len(err.splitlines()) == 1
            assert f"--vram {vram} GiB is not a plausible GPU size (one GPU's memory: 256 MiB to 4096 GiB)" in err


# estimate --cfg --no-cfg was taken (argparse keeps the last: 'CFG off') while --cfg --cond-uncond separate was refused;
# every --x / --no-x switch (estimate --cfg, --i2v; kv --enable-prefix-caching; trace --cfg) now refuses both
@pytest.mark.parametrize("argv,given,before", [
    (["estimate", "m.safetensors", "--cfg", "--no-cfg"], "--no-cfg", "--cfg"),
    (["estimate", "m.safetensors", "--no-cfg", "--cfg"], "--cfg", "--no-cfg"),
    (["estimate", "m.safetensors", "--i2v", "--no-i2v"], "--no-i2v", "--i2v"),
    (["kv", "--model", "Qwen/Qwen3-8B", "--enable-prefix-caching", "--no-enable-prefix-caching"],
     "--no-enable-prefix-caching", "--enable-prefix-caching"),
    (["trace", "--family", "sd1", "--width", "512", "--height", "512", "--no-cfg", "--cfg"], "--cfg", "--no-cfg")])
def test_both_spellings_of_a_switch_are_refused(argv, given, before, capsys):
    rc, out, err = run(argv, capsys)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1
    assert f"{given} contradicts {before} given before it: give one" in err


def test_a_switch_repeated_or_alone_is_taken(sd15_models, capsys):
    ckpt = str(sd15_models / "checkpoints" / "sd15.safetensors")
    for argv, cfg in ((["--cfg", "--cfg"], True), (["--no-cfg"], False), (["--cfg", "--cond-uncond", "batched"], True)):
        rc, res, err = run(["estimate", ckpt, "--vram", "8", "--json", *argv], capsys)
        assert rc == 0, err
        assert res["cfg"] is cfg


# kv --model qwen2.5:7b --weights-dtype Q8_0 sized Q8_0 under the note 'the library's default build, Q4_K_M', while
# hf.co/bartowski/...:Q4_K_M --weights-dtype Q8_0 was refused: in both the flag wins, and the tag's note says so
@pytest.mark.parametrize("model,note", [
    ("qwen2.5:7b", "Ollama tag 'qwen2.5:7b': weights sized as Q8_0 (--weights-dtype), not as the library's default "
                   "build, Q4_K_M"),
    ("hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M",
     "'hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M': weights sized as Q8_0 (--weights-dtype), not as the Q4_K_M file "
     "the tag names (llama.cpp -hf / Ollama hf.co load that one)"),
    ("hf.co/unsloth/Qwen3-30B-A3B-GGUF:UD-Q4_K_XL",
     "'hf.co/unsloth/Qwen3-30B-A3B-GGUF:UD-Q4_K_XL': weights sized as Q8_0 (--weights-dtype), not as the UD-Q4_K_XL "
     "file the tag names (llama.cpp -hf / Ollama hf.co load that one)")])
def test_a_weights_dtype_against_a_tag_wins_with_a_note(model, note, capsys):
    rc, res, err = run(["kv", "--model", model, "--runtime", "ollama", "--weights-dtype", "Q8_0", "--vram", "48",
                        "--json"], capsys)
    assert rc == 0, err
    assert note in res["notes"] and "weights_range" not in res
    assert "Q8_0" in res["weights_how"]


# kv --model qwen2.5:7b --runtime vllm printed 'vllm serve MODEL' and no word on what MODEL is: vLLM (and SGLang) load a
# Hugging Face repo id or a local folder, not an Ollama tag
@pytest.mark.parametrize("model,runtime,said", [
    ("qwen2.5:7b", "vllm", "vLLM cannot pull an Ollama tag: MODEL is a Hugging Face repo id or a local model folder; "
                           "'qwen2.5:7b' reads as Qwen2.5-7B, whose config.json was read from Qwen/Qwen2.5-7B-Instruct; "
                           "the figures above are for the tag's Q4_K_M build, not that repo's bf16 weights; serving "
                           "the repo needs its own plan: kv --model Qwen/Qwen2.5-7B-Instruct --runtime vllm"),
    ("llama3.1:8b", "sglang", "SGLang cannot pull an Ollama tag: MODEL is a Hugging Face repo id or a local model folder; "
                              "'llama3.1:8b' reads as Llama-3.1-8B, whose config.json was read from meta-llama/Llama-3.1-8B"),
    ("deepseek-coder:6.7b", "vllm", "the Hugging Face repo of 'deepseek-coder:6.7b' is not known here")])
def test_vllm_and_sglang_given_an_ollama_tag_say_what_model_to_give(model, runtime, said, capsys):
    rc, res, err = run(["kv", "--model", model, "--runtime", runtime, "--vram", "48", "--json"], capsys)
    assert rc == 0, err
    assert " MODEL " in res["command"]
    assert [n for n in res["notes"] if said in n]


@pytest.mark.parametrize("model,runtime", [("qwen2.5:7b", "ollama"), ("qwen2.5:7b", "llama.cpp"),
                                           ("Qwen/Qwen2.5-7B-Instruct", "vllm")])
def test_no_tag_note_where_the_command_takes_the_name(model, runtime, capsys):
    rc, res, err = run(["kv", "--model", model, "--runtime", runtime, "--vram", "48", "--json"], capsys)
    assert rc == 0, err
    assert not [n for n in res["notes"] if "cannot pull an Ollama tag" in n]


# estimate's tier line said "this machine's available RAM when written" with nothing written; the kind column cut
# "unused buffers (not loaded)" to "unused buffers ("; estimate --help had no text for --width / --height
def test_estimate_text_says_written_only_when_written(sd15_models, tmp_path, capsys, monkeypatch):
    from gpu_garden.memory.estimate import verdict
    monkeypatch.setattr(verdict, "host_available_ram", lambda: 32 << 30)
    wf = _sd15_workflow(tmp_path / "sd15_ui.json")
    argv = ["estimate", "--workflow", str(wf), "--models-dir", str(sd15_models)]
    tier = lambda out: next(line for line in out.splitlines() if line.startswith("per card tier:"))  # noqa: E731
    assert tier(run(argv, capsys)[1]).endswith("(host RAM 32.00 GiB, this machine's available RAM)")
    assert tier(run(argv + ["--ram", "64"], capsys)[1]).endswith("(host RAM 64.00 GiB, --ram)")
    out = run(argv + ["--write", str(tmp_path / "out.json")], capsys)[1]
    assert tier(out).endswith("(host RAM 32.00 GiB, this machine's available RAM when written)")
    written = json.loads((tmp_path / "out.json").read_text())["extra"]["gpu_garden"]["memory"]["host_ram_assumed"]
    assert written["source"] == "this machine's available RAM when written" and written["available"] == 32 << 30


def test_estimate_kind_column_holds_the_whole_kind(sd15_models, capsys):
    rc, out, _ = run(["estimate", str(sd15_models / "checkpoints" / "sd15.safetensors"), "--vram", "8"], capsys)
    row = next(line for line in out.splitlines() if line.startswith("sd15.safetensors") and " other " in line)
    assert "unused buffers (not loaded)" in row
    head = out.splitlines()[2]
    assert head.index("GiB") - head.index("kind") == len("unused buffers (not loaded)") + 1 + 4  # then '    GiB'


def test_estimate_help_describes_width_and_height(capsys):
    rc, out, _ = run(["estimate", "--help"], capsys)
    assert rc == 0
    assert "--width PX            image or video width in pixels" in out
    assert "--height PX           height in pixels (with --width)" in out
