"""Review rev22's findings (fix48b): each test names what the code did before its fix."""
import json

import pytest

from gpu_garden.memory.estimate import layouts, workflow
from support.cli_run import run, unwrap


@pytest.fixture(scope="module")
def sd15_models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", d / "checkpoints" / "sd15.safetensors")
    return d


def _write(tmp_path, models, target, capsys):
    n = [{"id": 1, "type": "CheckpointLoaderSimple", "widgets_values": ["sd15.safetensors"]},
         {"id": 2, "type": "EmptyLatentImage", "widgets_values": [512, 512, 1]},
         {"id": 3, "type": "KSampler", "widgets_values": [1, "fixed", 20, 7.0, "euler", "normal", 1.0]},
         {"id": 4, "type": "VAEDecode", "widgets_values": []}]
    wf = tmp_path / "sd15_ui.json"
    wf.write_text(json.dumps({"last_node_id": 4, "nodes": n, "links": [], "extra": {}, "version": 0.4}))
    return run(["estimate", "--workflow", str(wf), "--models-dir", str(models), "--vram", "8", "--write", str(target)], capsys)


# B2: any JSON object with a "nodes" list (a d3/networkx graph) or a value holding "class_type" was replaced
@pytest.mark.parametrize("content", ['{"graph": {}, "nodes": [{"id": "a"}], "links": []}',
                                     '{"nodes": [1, 2]}',
                                     '{"nodes": [{"id": 1, "type": "KSampler"}]}',  # no links list
                                     '{"1": {"class_type": 5}}',
                                     '{"1": {"class_type": "KSampler"}}',  # no inputs
                                     '{"1": {"class_type": "KSampler", "inputs": {}}, "meta": 3}',
                                     '{}'])
def test_write_refuses_json_that_only_looks_like_a_workflow(content, sd15_models, tmp_path, capsys):
    target = tmp_path / "graph.json"
    target.write_text(content)
    rc, out, err = _write(tmp_path, sd15_models, target, capsys)
    assert rc == 2 and out == "" and f"--write {target}: nothing written" in err
    assert target.read_text() == content


@pytest.mark.parametrize("content", ["", "  \n\t\r\n",
                                     '{"nodes": [], "links": []}',
                                     '{"nodes": [{"id": 7, "type": "Note"}], "links": [[1, 7, 0, 8, 0, "LATENT"]]}',
                                     '{"3": {"class_type": "KSampler", "inputs": {"seed": 1}}}'])
def test_write_replaces_an_empty_or_blank_file_and_real_workflows(content, sd15_models, tmp_path, capsys):
    target = tmp_path / "out.json"
    target.write_text(content)
    rc, out, err = _write(tmp_path, sd15_models, target, capsys)
    assert rc == 0 and f"written to {target}" in out, err
    assert json.loads(target.read_text())["extra"]["gpu_garden"]["memory"]["family"] == "sd1"


# B7: a read-only workflow (chmod 444) was replaced through its folder by os.replace (root passes os.access too)
def test_write_refuses_a_read_only_file(sd15_models, tmp_path, capsys):
    target = tmp_path / "ro.json"
    for content in ('{"nodes": [], "links": []}', ""):
        target.write_text(content)
        target.chmod(0o444)
        rc, out, err = _write(tmp_path, sd15_models, target, capsys)
        assert rc == 2 and out == "" and f"--write {target}: nothing written: the file is read-only" in err
        assert target.read_text() == content
        target.chmod(0o644)


# D4: the target was checked before the estimate and again inside write(); once is enough, its answer passed on
def test_write_target_is_checked_once(sd15_models, tmp_path, capsys, monkeypatch):
    calls = []
    from gpu_garden.memory.estimate import workflow_cli, workflow_write  # split from workflow.py

    check = workflow_write.check_write_target
    for module in (workflow_write, workflow_cli):  # counted wherever it is called: before the estimate, or inside write()
        monkeypatch.setattr(module, "check_write_target", lambda p: calls.append(p) or check(p))
    rc, out, err = _write(tmp_path, sd15_models, tmp_path / "new.json", capsys)
    assert rc == 0, err
    assert calls == [str(tmp_path / "new.json")]


def _offer(args, capsys):
    rc, out, err = run(["kv", "--model", "Qwen/Qwen3-8B", "--vram", "2", *args], capsys)
    line = next(x for x in unwrap(out).splitlines() if "leave no room" in x)  # the line as kv wrote it (term.py wraps)
    return line.split(": ", 1)[1]


def _gib(text, before):
    return float(text.split(before)[1].split(" GiB")[0])


# B1: with --weights-gib the offers were sized from and compared to the model's bf16: 4.5 GiB at TP 2 was offered
# "AWQ/GPTQ 4-bit ~861.45 MiB a GPU, fp8", both wider than the 4.5 GiB given
def test_quantized_offers_compare_with_the_weights_as_given(capsys):
    assert _offer(["--weights-gib", "4.5", "--tensor-parallel-size", "2"], capsys) == \
        "use --tensor-parallel-size over more GPUs"
    assert _offer(["--weights-gib", "4.5"], capsys) == "use --tensor-parallel-size over more GPUs"
    whole = _offer([], capsys)  # bf16 (15.27 GiB): both narrower
    assert "fp8" in whole and "a GPU" not in whole
    awq = _gib(whole, "4-bit ~")
    assert 4.5 < awq < 7.5  # 8.2B parameters at ~4 bits with bf16 embedding and head: wider than 4.5, under half of bf16
    split = _offer(["--weights-gib", "12", "--tensor-parallel-size", "2"], capsys)  # 12 GiB: AWQ and fp8 narrower
    assert "fp8" in split and abs(_gib(split, "4-bit ~") - awq / 2) <= 0.01


# B3: a GGUF tag with a checkpoint's --weights-dtype on Ollama or llama.cpp was sized silently as that checkpoint
@pytest.mark.parametrize("model,runtime", [("qwen3:8b", "ollama"), ("qwen3:8b", "llama.cpp"),
                                           ("hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M", "llama.cpp"),
                                           ("hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M", "ollama")])
@pytest.mark.parametrize("dtype", ["awq", "gptq", "fp8", "w4a16"])
def test_a_gguf_tag_refuses_a_checkpoint_type(model, runtime, dtype, capsys):
    rc, out, err = run(["kv", "--model", model, "--runtime", runtime, "--weights-dtype", dtype, "--vram", "24"], capsys)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"--weights-dtype {dtype}:" in err and "GGUF files only" in err and "Q4_K_M" in err and "Q8_0" in err


@pytest.mark.parametrize("model,runtime,dtype", [("qwen3:8b", "ollama", "Q8_0"), ("qwen3:8b", "llama.cpp", "bf16"),
                                                 ("qwen3:8b", "vllm", "awq"),  # vLLM: the tag's HF repo
                                                 ("Qwen/Qwen3-8B", "llama.cpp", "fp8")])  # no tag: a note, as before
def test_a_gguf_type_or_another_runtime_still_plans(model, runtime, dtype, capsys):
    rc, out, err = run(["kv", "--model", model, "--runtime", runtime, "--weights-dtype", dtype, "--vram", "24"], capsys)
    assert rc in (0, 1) and "weights" in out, err


IK = "ik_llama.cpp 3738 (fa90a986)"


def _ub_notes(ctx, version="b9849", **knobs):
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.units import GiB
    out = llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), "llama.cpp", ctx=ctx, parallel=1, flash_attn=True,
                   ngl=99, runtime_version=version, vram=24 * GiB, weights_dtype="Q4_K_M", **knobs)
    return [n for n in out["notes"] if n.startswith("-ub ")]


# B5: kv --runtime llama.cpp --ctx 256 noted "-ub 512 runs at -c 256" though -ub was never given (512 is the default);
# on ik_llama.cpp the note read "pads -c 256 to 256". Breaking it: drop the knobs test, or the cap != ctx test.
def test_the_micro_batch_note_only_for_a_ub_or_b_given():
    assert _ub_notes(256) == [] and _ub_notes(256, version=IK) == []
    assert _ub_notes(256, batch=1024) == []  # a -b above the default -ub caps nothing
    assert _ub_notes(256, batch=128)[0].startswith("-ub 512 runs at -b 128: llama.cpp caps the micro-batch")
    assert _ub_notes(256, ubatch=1024)[0].startswith("-ub 1024 runs at -c 256: llama.cpp caps the logical batch")
    ik = _ub_notes(256, version=IK, ubatch=1024)  # 256 is already a multiple of ik's 256-cell padding
    assert ik[0].startswith("-ub 1024 runs at -c 256: ik_llama.cpp caps the logical batch") and "pads" not in ik[0]
    assert "pads -c 1100 to 1280" in _ub_notes(1100, version=IK, ubatch=4096)[0]


# B6: a file of spaces, tabs and newlines was called "no text in it: N bytes, none printable"; it is text, and reads
# as the lines it has. Breaking it: space, tab or newline back among _Counted.BLANK.
@pytest.mark.parametrize("content,answer", [(b"   \n\t\n  \n", "No out-of-memory error found (3 lines read)."),
                                            (b"\r\n\n", "No out-of-memory error found (2 lines read)."),
                                            (b"    ", "No out-of-memory error found (1 line read)."),
                                            (b"\x00\x01\x02\x7f", "No out-of-memory error found: no text in it: 4 bytes, "
                                                                  "none printable.")])
def test_triage_of_blank_text_reads_its_lines(content, answer, tmp_path, capsys):
    f = tmp_path / "blank.log"
    f.write_bytes(content)
    rc, out, _ = run(["triage", str(f)], capsys)
    assert rc == 1 and out.strip() == answer


# B4: the GGUF sniff took only little-endian versions 1 to 3: a big-endian GGUF (gguf-py's --bigendian) and a newer
# version were read as a log, its gigabytes as text. Four printable bytes after the magic are >= 0x10000 in both byte
# orders (a value below 0x10000 has two NUL bytes at one end), so a log line opening with the word 'GGUF' is still
# read. Breaking it: the sniff back on little-endian only, or on versions 1 to 3.
@pytest.mark.parametrize("version,order", [(1, "little"), (3, "little"), (3, "big"), (2, "big"), (4, "little"),
                                           (0xFFFF, "big"), (0xFFFF, "little")])
def test_a_gguf_file_in_either_byte_order_is_refused(version, order):
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.triage.engine import _refuse_not_a_log
    with pytest.raises(UserError, match="is a GGUF model file"):
        _refuse_not_a_log(b"GGUF" + version.to_bytes(4, order) + bytes(8), "m.gguf")


@pytest.mark.parametrize("head", [b"GGUF model loaded\n", b"GGUF\tv3 \n", b"GGUF\n\n\n\n", b"GGUF~~~~",
                                  b"GGUF" + bytes(4) + b"x\n", b"GGUF\x01"])  # version 0; a short head
def test_text_after_the_gguf_magic_is_read(head):
    from gpu_garden.memory.triage.engine import _refuse_not_a_log
    _refuse_not_a_log(head, "log.txt")


# S1: kv --model qwen3:8b --runtime vllm named Qwen/Qwen3-8B "(that repo's own weights, not the tag's Q4_K_M build)",
# as if the figures were the repo's bf16; they are the tag's Q4_K_M (4.70 GiB, not 15.27). Breaking it: the old note.
def test_the_ollama_tag_note_says_whose_weights_the_figures_are(capsys):
    rc, res, err = run(["kv", "--model", "qwen3:8b", "--runtime", "vllm", "--vram", "48", "--json"], capsys)
    assert rc == 0, err
    assert "Q4_K_M" in res["weights_how"]
    note = next(n for n in res["notes"] if "cannot pull an Ollama tag" in n)
    assert "the figures above are for the tag's Q4_K_M build, not that repo's bf16 weights" in note
    assert note.endswith("serving the repo needs its own plan: kv --model Qwen/Qwen3-8B --runtime vllm")
    rc, res, err = run(["kv", "--model", "qwen3:8b", "--runtime", "vllm", "--vram", "48", "--json",
                        "--weights-dtype", "bf16"], capsys)
    note = next(n for n in res["notes"] if "cannot pull an Ollama tag" in n)
    assert "the figures above are for bf16 weights (--weights-dtype)" in note and "Q4_K_M" not in note


# D1: families.LLM_KINDS copied _llm_kind's answers by hand (a new vocabulary row would go unnamed in estimate's "an
# LLM, not a diffusion model" hint); now built from _llm_kind's tables. The kinds below are written out by hand from
# the vocabularies' models. Breaking it: a kind added to _llm_kind's tables and left out of LLM_KINDS.
def test_every_llm_kind_is_named_in_llm_kinds():
    from gpu_garden.memory.estimate import families
    q = {"layers.0.self_attn.q_norm.weight": 1}
    seen = {families._llm_kind({}, v, "") for v in (256000, 262144, 262208, 128256, 128000, 131072, 151936, 152064, 50)}
    seen |= {families._llm_kind(q, 151936, ""), families._llm_kind({"visual.blocks.0.x": 1}, 151936, "")}
    assert seen == {"gemma", "llama", "mistral", "qwen2.5", "qwen3", "qwen2.5-vl", "llm"} == set(families.LLM_KINDS)
    assert len(families.LLM_KINDS) == len(set(families.LLM_KINDS))
    for v in families._LLM_BY_VOCAB:  # every row of the table is a kind LLM_KINDS names
        assert families._llm_kind({}, v, "") in families.LLM_KINDS


# D2: estimate/report.py imported OnOff from the command line that imports it (from ..cli import OnOff, inside a
# function to dodge the cycle); both now take it from memory/cli_args.py. Breaking it: the import back in report.py.
def test_estimate_options_take_onoff_from_cli_args_not_the_cli(capsys):
    import ast
    from pathlib import Path
    from gpu_garden.memory import cli, cli_args
    from gpu_garden.memory.estimate import report
    tree = ast.parse(Path(report.__file__).read_text(encoding="utf-8"))
    imported = {(n.module, a.name) for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert ("cli", "OnOff") not in imported and (".cli", "OnOff") not in imported
    assert ("cli_args", "OnOff") in imported and report.OnOff is cli.OnOff is cli_args.OnOff
    rc, out, err = run(["estimate", "--cfg", "--no-cfg", "x.safetensors"], capsys)  # still refused together
    assert rc == 2 and "--no-cfg contradicts --cfg given before it: give one" in err
