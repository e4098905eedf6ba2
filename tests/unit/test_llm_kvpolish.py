"""kv correctness fixes found in review: what a config folder's weights are read from, an unknown model_type said
to be sized as a generic decoder, contexts a release changed, honest runtime versions, the -ngl words."""
import json

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.llm import kv as K

# stabilityai/stablelm-2-1_6b config.json (model_type stablelm: no layer rules in kv)
STABLELM = {"architectures": ["StableLmForCausalLM"], "model_type": "stablelm", "hidden_size": 2048,
            "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 32,
            "vocab_size": 100352, "max_position_embeddings": 4096, "partial_rotary_factor": 0.25,
            "tie_word_embeddings": False, "torch_dtype": "bfloat16"}


def _kv_json(argv, capsys):
    rc = cli.main(["kv"] + argv + ["--json"])
    return rc, json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- an unknown model_type is said to be generic

def test_unknown_model_type_is_said_to_use_generic_decoder_rules(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps(STABLELM))
    rc, r = _kv_json(["--config", str(tmp_path / "config.json"), "--ctx", "4096"], capsys)
    assert r["model"]["layer_rules"] == "generic decoder"
    assert any("'stablelm'" in n and "generic decoder" in n for n in r["notes"])
    cli.main(["kv", "--config", str(tmp_path / "config.json"), "--ctx", "4096"])
    assert "note: model_type 'stablelm' has no layer rules in kv" in capsys.readouterr().out


def test_known_model_types_carry_no_generic_note():
    for name in ("Qwen3-8B", "Gemma-3-12B", "Qwen3-VL-30B-A3B", "Llama-3.2-11B-Vision", "Qwen3-Omni-30B-A3B"):
        s = K.describe(model=name)
        assert not s.generic and s.summary()["layer_rules"] == s.arch
        assert not any("generic decoder" in n for n in s.notes)
