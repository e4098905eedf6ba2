"""fix25: one config.json reader for a target and a speculative drafter; vLLM's AWQ refusing 2/3-bit checkpoints;
8-bit GPTQ's scales and zeros; n_cpu_moe refused by the Python API where the CLI refuses it."""
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import files
from gpu_garden.memory.llm.runtimes import vllm_drafter
from support.dflash_drafter import write_drafter

TARGET = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 640, "intermediate_size": 1024,
          "num_hidden_layers": 2, "num_attention_heads": 8, "max_position_embeddings": 2048}


# 2. The drafter's config.json had a reader of its own (vllm_drafter._config_path + json.load) beside
# files.load_config's: both now go through files.read_config. Breaking it: read_drafter back to its own open/json.load.
def test_a_drafter_folder_and_a_target_folder_are_read_by_one_reader(tmp_path, monkeypatch):
    target, drafter = tmp_path / "target", tmp_path / "drafter"
    target.mkdir()
    drafter.mkdir()
    (target / "config.json").write_text(json.dumps(TARGET))
    write_drafter(drafter)
    seen, real = [], files.read_config
    monkeypatch.setattr(files, "read_config", lambda path, missing=None: seen.append(str(path)) or real(path, missing))
    files.load_config(str(target))
    vllm_drafter.read_drafter("dflash", str(drafter))
    assert seen == [str(target), str(drafter)]


@pytest.mark.parametrize("body", ["{\"hidden_size\": 640,", "[1, 2, 3]", "\"config\""])
def test_a_broken_config_json_is_the_same_error_for_a_drafter_and_a_target(tmp_path, body):
    (tmp_path / "config.json").write_text(body)
    with pytest.raises(UserError) as as_target:
        files.load_config(str(tmp_path))
    with pytest.raises(UserError) as as_drafter:
        vllm_drafter.read_drafter("dflash", str(tmp_path))
    assert str(as_target.value) == str(as_drafter.value)
    assert "not a readable JSON config" in str(as_target.value) or "not a JSON object" in str(as_target.value)


def test_a_drafter_given_by_repo_id_still_says_to_download_its_config(tmp_path):
    with pytest.raises(UserError, match="kv describes no drafter by name"):
        vllm_drafter.read_drafter("dflash", "z-lab/Qwen3-8B-DFlash-b16")
    with pytest.raises(UserError, match="is no local config.json or folder"):
        vllm_drafter.read_drafter("dflash", str(tmp_path))     # a folder without config.json
