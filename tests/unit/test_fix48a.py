"""Task fix48a: review rev21's findings on session 48's merged work.

B1. The "-ub above -b" note named -b whenever -ub > -b, but the micro-batch is min(-c, -b, -ub) (llamacpp.micro_batch;
    ik_llama.cpp pads -c first: 256 cells with flash attention, 32 without). Worked by hand:
      mainline -c 1024 -ub 4096 (-b 2048 by default): min(1024, 2048, 4096) = 1024, capped by -c
      mainline -c 3000 -ub 4096: min(3000, 2048, 4096) = 2048, capped by -b, and -c 3000 < 4096 as well
      ik_llama.cpp -c 1100 -ub 4096: -c padded to 1280 (flash attention, 5 x 256) or 1120 (without, 35 x 32), below -b
      ik_llama.cpp -c 1100 -b 8: -b raised to GGML_KQ_MASK_PAD, 16

B2. An undetected diffusion model's arch (families._generic_width, 8e288db3: hidden = its width, depth/heads/ffn 0,
    block "unknown") overwrote the DEFAULT_ARCH of a family the node names from ComfyUI's config class
    (policy["family"]). The expected sample activations are those of the code before 8e288db3 (git show
    8e288db3^:memory/estimate/families.py, hidden 0 for an undetected table, so the family's DEFAULT_ARCH stood), run
    on this tree with that one file swapped in; with the bug: 2,850,034,688 / 2,048,776,448 / 1,120,665,600.

B3. kv --gpu-name NAME that cards.py does not know ('4090' for 'RTX 4090') was noted for vLLM and SGLang only; Ollama
    (whose default num_ctx reads the card's total) and llama.cpp passed over it.

B4. triage refused any input opening with the bytes 'GGUF' as a GGUF model file, a text log starting with the word
    too; a GGUF file's magic is followed by its version, 1 to 3 as a little-endian uint32 ('GGUF' then ' mod' reads as
    1,685,024,032). A safetensors header length of 0 (eight NULs) is no safetensors file.

S3. _kv_local_model's docstring likened kv --model x.gguf to llama.cpp's -m, while without --runtime it plans vLLM
    (the default runtime is not changed): the docstring and --help now say so.

D3. _kv_local_model: os imported at the top, its UserError goes through main's common error path, and ~ is expanded
    (the shell does not expand it after '=': --model=~/m.gguf).
"""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB
from support.cli_run import run

IK = "ik_llama.cpp 3738 (fa90a986)"


def _ub_notes(ctx, fa=True, version="b9849", **knobs):
    out = llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), "llama.cpp", ctx=ctx, parallel=1, flash_attn=fa,
                   ngl=99, runtime_version=version, vram=24 * GiB, weights_dtype="Q4_K_M", ubatch=4096, **knobs)
    return [n for n in out["notes"] if n.startswith("-ub ")]


# Breaking it: the note back on s["ubatch"] > s["batch"] alone (-c 1024 then reads "runs at -b 2048", the figures being
# for 1024), or its cap taken from the -c given on ik_llama.cpp (1100, not 1280 / 1120).
def test_the_micro_batch_note_names_the_cap_that_binds():
    assert _ub_notes(1024) == ["-ub 4096 runs at -c 1024: llama.cpp caps the logical batch at the context and the "
                               "micro-batch at it; the figures are for 1024 (--batch 4096 and a context of at least 4096 "
                               "for 4096)"]
    assert _ub_notes(8192) == ["-ub 4096 runs at -b 2048: llama.cpp caps the micro-batch at the logical batch (its "
                               "default); the figures are for 2048 (--batch 4096 for 4096)"]
    assert _ub_notes(3000)[0].endswith("the figures are for 2048 (--batch 4096 and a context of at least 4096 for 4096)")
    assert _ub_notes(1024, batch=4096)[0].startswith("-ub 4096 runs at -c 1024: ")
    assert _ub_notes(1024, batch=4096)[0].endswith("(a context of at least 4096 for 4096)")
    assert _ub_notes(8192, batch=4096) == []
    assert _ub_notes(1100, version=IK) == [
        "-ub 4096 runs at 1280: ik_llama.cpp pads -c 1100 to 1280 (its cache's padding with flash attention) and caps "
        "the logical batch, then the micro-batch, at it; the figures are for 1280 (--batch 4096 and a context of at "
        "least 4096 for 4096)"]
    assert _ub_notes(1100, fa=False, version=IK)[0].startswith("-ub 4096 runs at 1120: ik_llama.cpp pads -c 1100 to 1120 "
                                                                 "(its cache's padding without flash attention)")
    assert _ub_notes(1100, version=IK, batch=8)[0].startswith("-ub 4096 runs at 16: ik_llama.cpp raises -b 8 to "
                                                               "GGML_KQ_MASK_PAD (16)")
    assert _ub_notes(8192, version=IK)[0].startswith("-ub 4096 runs at -b 2048: ik_llama.cpp caps the micro-batch")


def _undetected(width=3072, blocks=40):
    names = (("q", (width, width)), ("k", (width, width)), ("v", (width, width)), ("o", (width, width)),
             ("up", (4 * width, width)), ("down", (width, 4 * width)))
    return {f"diffusion_model.blocks_x.{i}.{n}.weight": ("BF16", shape) for i in range(blocks) for n, shape in names}


# Breaking it: formula.estimate's arch.update(dm["arch"]) back on dm's width alone (the values with the bug above).
@pytest.mark.parametrize("family,size,expected", [("hunyuan-video", (848, 480, 25), 2_018_962_350),
                                                  ("mochi", (848, 480, 25), 1_510_988_032),
                                                  ("hidream", (1024, 1024, 1), 620_625_920)])
def test_a_family_named_by_the_policy_keeps_its_default_arch(family, size, expected):
    from gpu_garden.memory.estimate import families, formula
    comps = families.split_components(_undetected(), "x.safetensors")
    assert [c["family"] for c in comps if c["role"] == "diffusion_model"] == ["unknown"]
    est = formula.estimate(comps, *size, cfg=True, policy={"family": family})
    # fix48b (review rev22 S3): the arch used is the family's table entry, whatever the code computes from it
    from gpu_garden.memory.estimate.spec import DEFAULT_ARCH
    assert est["family"] == family and est["_ctx"]["arch"] == DEFAULT_ARCH[family]
    assert est["breakdown"]["sample"]["activations"] == expected
    # an unknown family still takes the table's width (ux48's 8e288db3): 3072, not hidream's 2560
    assert any("x hidden 3072 per token" in a for a in formula.estimate(comps, 1024, 1024, cfg=True)["assumptions"])


# Breaking it: report._vram_bytes' unknown-name note back on args.runtime in ("vllm", "sglang"), or on --gpu-name alone
# (a known 'RTX 4090' then reads as unknown for Ollama and llama.cpp, which take no total from the name).
# (ux50 S6: '4090' alone is now the RTX 4090; an RTX 3060 12GB has no figure in cards.py)
@pytest.mark.parametrize("runtime", ["ollama", "llama.cpp", "vllm"])
def test_an_unknown_gpu_name_is_noted_for_every_runtime(runtime, capsys):
    base = ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", runtime, "--json", "--gpu-name"]
    rc, res, err = run(base + ["RTX 3080 12GB"], capsys)
    assert rc in (0, 1), err
    assert any(n.endswith("--gpu-name 'RTX 3080 12GB': kv does not know this card's total memory: give --vram GIB")
               for n in res["notes"])
    _, known, _ = run(base + ["RTX 4090"], capsys)
    assert not any("does not know this card" in n for n in known["notes"])
    if runtime == "ollama":
        assert known["ctx"] == 32768 and res["ctx"] == 4096  # 23.55 GiB: the 32768 tier; unknown: the lowest
        assert any(n.endswith("without --vram or a --gpu-name kv knows taken as 4096") for n in res["notes"])


OOM = b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"


# Breaking it: engine._refuse_not_a_log's GGUF test back on head.startswith(b"GGUF") alone (the log is refused, exit 2),
# or its safetensors test without the zero-length check (eight NULs then '{"' refused as a safetensors file).
@pytest.mark.parametrize("head", [b"GGUF model loaded: x\n", bytes(8) + b'{"a": 1}\n'])
def test_a_log_that_only_looks_like_a_model_file_is_read(head, monkeypatch, capsys):
    import io
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(head + OOM))))
    rc, out, err = run(["triage", "-"], capsys)
    assert rc == 0 and "model file, not a log" not in err and "requested 2.00 GiB" in out


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_gguf_file_of_each_version_is_still_refused(version):
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.triage.engine import _refuse_not_a_log
    with pytest.raises(UserError, match="is a GGUF model file"):
        _refuse_not_a_log(b"GGUF" + version.to_bytes(4, "little") + bytes(2), "m.gguf")
    # fix48b (review rev22 B4): any version below 0x10000, little- or big-endian, is a GGUF file's (test_fix48b.py)


def _gguf(path):
    pytest.importorskip("gguf")
    from support.gguf_files import tiny_llama_q8
    return tiny_llama_q8(path)


# Breaking it: --runtime's help back to "... else vllm" without the local GGUF file (or --model's without the runtime).
def test_kv_help_says_a_local_gguf_file_still_plans_vllm(tmp_path, capsys):
    rc, res, err = run(["kv", "--model", str(_gguf(tmp_path / "m.gguf")), "--vram", "8", "--json"], capsys)
    assert rc == 0 and res["runtime"] == "vllm", err
    rc, out, _ = run(["kv", "--help"], capsys)
    text = " ".join(out.split())
    assert rc == 0 and "else vllm (a local GGUF file too: --runtime llama.cpp for llama-server -m)" in text
    assert "(read as --config / --gguf; the runtime is still vllm unless --runtime names another)" in text


# Breaking it: _kv_local_model without os.path.expanduser ("~/my-llama: no such file or folder", exit 2).
def test_kv_model_expands_the_home_folder(tmp_path, monkeypatch, capsys):
    import json
    folder = tmp_path / "my-llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "max_position_embeddings": 8192, "torch_dtype": "bfloat16", "head_dim": 128}))
    monkeypatch.setenv("HOME", str(tmp_path))
    argv = ["--vram", "24", "--ctx", "4096", "--json"]
    rc, by_tilde, err = run(["kv", "--model=~/my-llama", *argv], capsys)
    assert rc == 0, err
    _, by_config, _ = run(["kv", "--config", str(folder), *argv], capsys)
    assert by_tilde == by_config
    rc, _, err = run(["kv", "--model=~/nothing.gguf"], capsys)
    assert rc == 2 and err == f"gpu-garden kv: error: {tmp_path}/nothing.gguf: no such file or folder (a local model is its " \
        "folder, config.json, .safetensors or GGUF file; a Hugging Face repo id is user/repo)\n"
