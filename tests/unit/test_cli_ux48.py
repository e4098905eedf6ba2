"""ux48: what a new user typed first, and where the CLI answered wrongly or unhelpfully."""
import json
import struct

import pytest

from support.cli_run import run

OOM_LOG = (b"Traceback (most recent call last):\n"
           b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
           b"23.65 GiB of which 1.12 GiB is free.\n")


def _safetensors(path, n_bytes=1 << 30):
    """A sparse safetensors file: one tensor of n_bytes, its data a hole (reads back as zeros)."""
    header = json.dumps({"w": {"dtype": "U8", "shape": [n_bytes], "data_offsets": [0, n_bytes]}}).encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.truncate(8 + len(header) + n_bytes)
    return path


# triage given a model file: a 24 GB FLUX safetensors was read as a log for about nine minutes (2.3 s per 100 MB of
# zeros), then "No out-of-memory error found: the input is empty (0 lines)", exit 1
def test_triage_of_a_safetensors_file_says_it_is_a_model_file(tmp_path, capsys):
    rc, _, err = run(["triage", str(_safetensors(tmp_path / "flux1-dev.safetensors"))], capsys)
    assert rc == 2 and len(err.splitlines()) == 1
    assert "is a safetensors model file, not a log" in err and "gpu-garden estimate FILE" in err


def test_triage_of_a_gguf_file_on_standard_input_says_it_is_a_model_file(monkeypatch, capsys):
    import io
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(b"GGUF\x03\x00\x00\x00" + bytes(64)))))
    rc, _, err = run(["triage", "-"], capsys)
    assert rc == 2 and "standard input is a GGUF model file, not a log" in err and "kv --gguf FILE" in err


@pytest.mark.parametrize("first", [b'INFO:   {"event": "start"}\n', b'12345678{"a": 1}\n'])
def test_a_text_log_whose_ninth_byte_opens_json_is_still_read(first, tmp_path, capsys):
    f = tmp_path / "json.log"
    f.write_bytes(first + OOM_LOG)  # eight text bytes, then '{"': not a safetensors length (no NUL)
    rc, out, _ = run(["triage", str(f)], capsys)
    assert rc == 0 and "line 3" in out


# estimate --vae-tile 256 (or a VAE Decode (Tiled) node at tile_size 256) figured the tiled row at 256 px, but the
# assumption under it said "tiled: VAE Decode (Tiled) 512 px", the node's default
@pytest.mark.parametrize("tile,frames,said", [(None, 1, "512 px"), ({"tile": 256}, 1, "256 px"),
                                              ({"tile": 1024, "frames": 16}, 33, "1024 px, 16 frames"),
                                              ({"tile": 256}, 33, "256 px, 64 frames")])
def test_the_vae_decode_assumption_names_the_tile_figured(tile, frames, said):
    from gpu_garden.memory.estimate import families, formula, layouts
    name = "sd15_v1-5-pruned-emaonly-fp16" if frames == 1 else "wan_wan2.1_t2v_1.3B_fp16"
    comps = families.split_components(layouts.table(name), name + ".safetensors")
    est = formula.judge(formula.estimate(comps, 512, 512, frames, cfg=None, policy={"dynamic_vram": "off", "tile": tile}),
                        8 << 30)
    line = [a for a in est["assumptions"] if a.startswith("VAE decode:")]
    assert len(line) == 1 and line[0].endswith(f"tiled: VAE Decode (Tiled) {said}")


# kv --model takes a model "the way you name it to your runtime" (README), a local folder or GGUF file included, as
# `vllm serve ./folder` and `llama-server -m file.gguf` do; it answered "unknown model '/path'" and exit 2
LLAMA_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16", "head_dim": 128}


@pytest.mark.parametrize("given", ["folder", "config.json"])
def test_kv_model_given_a_local_folder_reads_it_as_config(given, tmp_path, capsys):
    folder = tmp_path / "my-llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    path = str(folder if given == "folder" else folder / "config.json")
    rc, by_model, err = run(["kv", "--model", path, "--vram", "24", "--ctx", "4096", "--json"], capsys)
    assert rc == 0, err
    rc2, by_config, _ = run(["kv", "--config", path, "--vram", "24", "--ctx", "4096", "--json"], capsys)
    assert rc2 == 0 and by_model == by_config
    assert by_model["runtime"] == "vllm" and by_model["command"].startswith(f"vllm serve {folder} ")


def test_kv_model_given_a_gguf_file_reads_it_as_gguf(tmp_path, capsys):
    pytest.importorskip("gguf")
    from support.gguf_files import tiny_llama_q8
    f = tiny_llama_q8(tmp_path / "tiny-Q8_0.gguf")
    argv = ["--runtime", "llama.cpp", "--vram", "8", "--json"]
    rc, by_model, err = run(["kv", "--model", str(f), *argv], capsys)
    assert rc == 0, err
    _, by_gguf, _ = run(["kv", "--gguf", str(f), *argv], capsys)
    assert by_model == by_gguf and str(f) in by_model["command"]


@pytest.mark.parametrize("name", ["/models/llama-3.1-8b", "./llama.gguf", "Llama-3.1-8B-Q4_K_M.gguf"])
def test_kv_model_given_a_missing_path_says_so(name, capsys):
    rc, _, err = run(["kv", "--model", name], capsys)
    assert rc == 2 and f"{name}: no such file or folder" in err and "unknown model" not in err


# kv --tensor-parallel-size 3 on Llama-3.1-8B (32 attention heads) printed a plan, "fits", exit 0, with "2 KV heads";
# vLLM refuses to start: "Total number of attention heads (32) must be divisible by tensor parallel size (3)"
@pytest.mark.parametrize("runtime", ["vllm", "sglang"])
def test_kv_refuses_a_tensor_parallel_size_that_does_not_divide_the_heads(runtime, capsys):
    rc, _, err = run(["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", runtime,
                      "--tensor-parallel-size", "3", "--vram", "24"], capsys)
    assert rc == 2 and len(err.splitlines()) == 1
    assert "refuses --tensor-parallel-size 3" in err and "32 attention heads" in err and "2, 4, 8, 16, 32" in err


@pytest.mark.parametrize("tp", ["2", "4", "8"])
def test_kv_plans_a_tensor_parallel_size_that_divides_the_heads(tp, capsys):
    rc, res, err = run(["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", tp,
                        "--vram", "24", "--ctx", "8192", "--json"], capsys)
    assert rc == 0, err
    assert f"--tensor-parallel-size {tp}" in res["command"]


# estimate WF.json (the workflow given as a model file, --workflow forgotten): "not a safetensors file (it starts with
# text '{"last_n'; give a .safetensors or .gguf model file)", which names neither --workflow nor kv --config
@pytest.mark.parametrize("name,text", [("wf.json", '{"last_node_id": 9, "nodes": []}'),
                                       ("workflow_api.txt", '{\n  "3": {"class_type": "KSampler"}}'),
                                       ("config.json", '{"model_type": "llama"}')])
def test_estimate_of_a_json_file_names_workflow_and_kv_config(name, text, tmp_path, capsys):
    f = tmp_path / name
    f.write_text(text)
    rc, _, err = run(["estimate", str(f)], capsys)
    assert rc == 2 and len(err.splitlines()) == 1
    assert "--workflow WF.json --models-dir DIR" in err and "kv --config FILE" in err


def test_estimate_of_another_text_file_still_asks_for_a_model_file(tmp_path, capsys):
    f = tmp_path / "notes.txt"
    f.write_text("import os\nprint(1)\n")
    rc, _, err = run(["estimate", str(f)], capsys)
    assert rc == 2 and "give a .safetensors or .gguf model file" in err and "--workflow" not in err


# an unrecognised model: "generic DiT figures (20 x hidden per token)" were figured with hidden 0 ("sample: 20.0 x hidden
# 0 per token"): 10 MiB of activations for a 3072-wide, 40-block DiT at 1024x1024 (ComfyUI's own figure: 1.28 GiB)
def _unknown_dit(width=3072, blocks=40):
    t = {}
    for i in range(blocks):
        for n, shape in (("q", (width, width)), ("k", (width, width)), ("v", (width, width)), ("o", (width, width)),
                         ("up", (4 * width, width)), ("down", (width, 4 * width)), ("norm", (width,))):
            t[f"layers.{i}.{n}.weight"] = ("BF16", shape)
    return t


def test_an_unknown_model_is_figured_with_its_own_width():
    from gpu_garden.memory.estimate import families, formula
    assert families.detect_family(_unknown_dit())["arch"]["hidden"] == 3072
    # no square matrix: the commonest input width of its matrices
    assert families.detect_family({"a.weight": ("F16", (512, 1024)), "b.weight": ("F16", (256, 1024)),
                                   "c.weight": ("F16", (1024, 512))})["arch"]["hidden"] == 1024
    assert families.detect_family({"a.bias": ("F16", (1024,))})["arch"]["hidden"] == 0
    est = formula.estimate(families.split_components(_unknown_dit(), "x.safetensors"), 1024, 1024, cfg=True)
    assert est["family"] == "unknown" and est["unknown"]
    # 20 x 3072 x (4096 image + 256 text tokens) x 2 (cond and uncond) x 2 bytes = 1,069,547,520
    assert 1_069_547_520 <= est["breakdown"]["sample"]["activations"] < 1.05 * 1_069_547_520
    assert any("20.0 x hidden 3072 per token" in a for a in est["assumptions"])


# kv --model qwen2.5:7b-instruct-q8_0 --weights-dtype Q4_K_M sized the weights as Q4_K_M (4.35 GiB) while its note still
# said "Q8_0 weights from the tag"; a repo id's name note already said "weights sized as X (--weights-dtype), not as ..."
def test_an_ollama_tag_note_says_weights_dtype_overrode_the_tag(capsys):
    rc, res, err = run(["kv", "--model", "qwen2.5:7b-instruct-q8_0", "--weights-dtype", "Q4_K_M", "--vram", "8", "--json"],
                       capsys)
    assert rc == 0, err
    tag = [n for n in res["notes"] if n.startswith("Ollama tag")]
    assert tag == ["Ollama tag 'qwen2.5:7b-instruct-q8_0': weights sized as Q4_K_M (--weights-dtype), not as the Q8_0 "
                   "the tag names"]
    _, same, _ = run(["kv", "--model", "qwen2.5:7b-instruct-q8_0", "--vram", "8", "--json"], capsys)
    assert "Ollama tag 'qwen2.5:7b-instruct-q8_0': Q8_0 weights from the tag" in same["notes"]


# kv --gpu-name with a card the table has no figure for, without --vram: no verdict, and no word that the name was not
# known (ux48 used '4090', which ux50 S6 made the RTX 4090's spelling)
def test_an_unknown_gpu_name_says_so(capsys):
    rc, res, err = run(["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-name", "RTX 3080 12GB", "--json"], capsys)
    assert rc in (0, 1), err
    assert any(n.endswith("--gpu-name 'RTX 3080 12GB': kv does not know this card's total memory: give --vram GIB") for n in res["notes"])
    _, known, _ = run(["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-name", "RTX 4090", "--json"], capsys)
    assert not any("does not know this card" in n for n in known["notes"]) and known["vram"] == int(23.55 * (1 << 30))


# flux1-dev-Q8_0.gguf on an 8 GB card: the knobs offered a lower resolution only ("still over"); the GGUF Q4_K knob,
# offered for the bf16 file, requantized float tensors alone, so from a Q8_0 file it saved nothing and was dropped
def test_a_q8_0_gguf_is_offered_q4_k_as_the_float_file_is():
    from gpu_garden.memory.estimate import families, formula, layouts
    from gpu_garden.memory.estimate import headers
    table = layouts.table("flux_flux1-dev")
    # city96's Q8_0 files: Q8_0 where rows are whole 32-blocks, BF16 elsewhere (tests/support/gguf_files.py)
    q8 = {k: ("Q8_0" if len(s) >= 2 and s[-1] % 32 == 0 else "BF16", s) for k, (dt, s) in table.items()}
    peaks = {}
    for name, t in (("bf16", table), ("q8_0", q8)):
        est = formula.judge(formula.estimate(families.split_components(t, f"flux1-dev-{name}"), 1024, 1024, cfg=None,
                                             policy={"dynamic_vram": "off", "host_ram": 64 << 30}), 8 << 30)
        peaks[name] = {k["id"]: k["peak_after"] for k in est["knobs"]}
    assert "gguf_q4_k" in peaks["q8_0"] and "gguf_q8_0" not in peaks["q8_0"]  # no saving from Q8_0 to Q8_0
    assert peaks["q8_0"]["gguf_q4_k"] == peaks["bf16"]["gguf_q4_k"]  # the same Q4_K file, from either start
    assert headers.tensor_bytes("Q4_K", (3072, 3072)) < headers.tensor_bytes("Q8_0", (3072, 3072))
