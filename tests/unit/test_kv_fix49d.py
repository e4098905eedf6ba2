"""fix49d: review rev26's findings on fix49c's `gpu-garden kv` changes. B1 an Ollama Modelfile's FROM only where Ollama
loads the name; S3 a mixed sliding/full drafter without sliding_window refused; S4 the mixed drafter's note with no
--runtime-version names the newest vLLM, and --json marks its KV as sized all full."""
import json

import pytest

from support.cli_run import json_out, text, unwrap


def _text(argv, capsys):
    """kv's text with term.py's wrapping undone (support.cli_run.unwrap): these pin whole lines."""
    rc, out = text(argv, capsys)
    return rc, unwrap(out)


WHY = ("Ollama needs a GGUF: a library tag or hf.co/USER/REPO-GGUF:TYPE (or a GGUF file with --gguf); {name!r} is "
       "neither")


# B1. Qwen/Qwen3-8B on Ollama at 32,768 tokens on 12 GiB sets num_ctx (a PARAMETER line), but a Hub checkpoint's repo
# id is no name Ollama pulls: no FROM, no `ollama run Qwen/Qwen3-8B`, one line saying why. A library tag and an hf.co/
# GGUF name keep their Modelfile. Breaks on the old code, which printed "FROM Qwen/Qwen3-8B  (the name given)".
@pytest.mark.parametrize("model", ["Qwen/Qwen3-8B", "google/gemma-3-4b-it"])
def test_hub_checkpoint_id_gets_no_modelfile_on_ollama(model, capsys):
    argv = ["kv", "--model", model, "--runtime", "ollama", "--vram", "12", "--ctx", "32768"]
    rc, text = _text(argv, capsys)
    assert "FROM " not in text and "PARAMETER num_ctx" not in text and f"ollama run {model}" not in text
    assert f"  (no Modelfile or ollama run line: {WHY.format(name=model)})" in text.splitlines()
    r = json_out(argv, capsys)
    assert r["modelfile_from"] is None and r["modelfile_none"] == WHY.format(name=model)


@pytest.mark.parametrize("model", ["qwen3:8b", "hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M"])
def test_ollama_names_keep_their_modelfile(model, capsys):
    rc, text = _text(["kv", "--model", model, "--runtime", "ollama", "--vram", "12", "--ctx", "32768"], capsys)
    lines = text.splitlines()
    i = lines.index("  PARAMETER num_ctx 32768")
    assert lines[i - 1] == f"  FROM {model}  (the name given)"
    assert "no Modelfile" not in text


# S3, S4. The 27B DFlash drafter's fields (test_kv_fix49c's MIXED), sliding_window left out.
MIXED = {"architectures": ["DFlashDraftModel"], "hidden_size": 5120, "num_hidden_layers": 5, "num_attention_heads": 32,
         "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 17408, "vocab_size": 248320,
         "layer_types": ["sliding_attention"] * 4 + ["full_attention"],
         "dflash_config": {"target_layer_ids": [1, 16, 31, 46, 61]}}


# S3. Four sliding layers and no window: refused as the all-sliding drafter is. Breaks on the old code, which read the
# window as None and printed "(None-token window)".
def test_mixed_drafter_without_window_is_refused(tmp_path):
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm.runtimes import vllm_drafter as VD
    local = tmp_path / "config.json"
    local.write_text(json.dumps(MIXED))
    with pytest.raises(UserError, match=r"sliding_window must be a whole number 1\.\.1048576, got None"):
        VD.read_drafter("dflash", str(local))


# S4. With no --runtime-version kv sizes the newest vLLM: the note says so (not "this build"), a given 0.24.0 is "this
# build"; --json marks the all-full sizing for every version (0.20.1 too), and a drafter of full layers only
# (z-lab/Qwen3.6-35B-A3B-DFlash) has no such field. Breaks on the old code (the note said "this build is 0.24 or later"
# with no build given, and no drafter_kv_sizing).
def test_mixed_drafter_note_and_json_sizing(capsys):
    spec5 = json.dumps({"method": "dflash", "model": "z-lab/Qwen3.6-27B-DFlash", "num_speculative_tokens": 5})
    base = ["kv", "--model", "Qwen/Qwen3.6-27B", "--runtime", "vllm", "--speculative-config", spec5]
    said = "as vLLM before 0.24 does; "
    r = json_out(base, capsys)
    newest = [n for n in r["notes"] if said in n]
    assert len(newest) == 1 and "as vLLM before 0.24 does; the newest vLLM (0.24 or later), whose DFlash V2" in newest[0]
    assert "this build" not in newest[0]
    assert r["drafter_kv_sizing"] == "all-full (vLLM < 0.24)"
    given = json_out(base + ["--runtime-version", "0.24.0"], capsys)
    assert any("as vLLM before 0.24 does; this build is 0.24 or later, whose" in n for n in given["notes"])
    assert json_out(base + ["--runtime-version", "0.20.1"], capsys)["drafter_kv_sizing"] == "all-full (vLLM < 0.24)"
    full = json.dumps({"method": "dflash", "model": "z-lab/Qwen3.6-35B-A3B-DFlash", "num_speculative_tokens": 5})
    assert "drafter_kv_sizing" not in json_out(["kv", "--model", "Qwen/Qwen3.6-35B-A3B", "--runtime", "vllm",
                                                "--speculative-config", full], capsys)
