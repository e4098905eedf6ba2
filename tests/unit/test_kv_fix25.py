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


# 3. vLLM's AWQ loads 4-bit weights only: AWQConfig.__init__ raises "Currently, only 4-bit weight quantization is
# supported for AWQ, but got 3 bits." (vllm/model_executor/layers/quantization/awq.py). A 2/3-bit AWQ checkpoint was
# sized at its width for --runtime vllm; it is refused as vLLM refuses it. Breaking it: plan_weights.weights_format's
# check_quant_width call out (the drafter's: read_drafter's).
QWEN = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "max_position_embeddings": 32768, "torch_dtype": "float16", "tie_word_embeddings": False}


def _awq(tmp_path, bits, method="awq"):
    q = {"quant_method": method, "bits": bits, "group_size": 128}
    q.update({"zero_point": True} if method == "awq" else {"sym": True})
    (tmp_path / "config.json").write_text(json.dumps(dict(QWEN, quantization_config=q)))
    return str(tmp_path / "config.json")


@pytest.mark.parametrize("bits", [3, 2])
def test_a_low_bit_awq_checkpoint_is_refused_for_vllm(tmp_path, bits):
    from gpu_garden.memory.llm import kv as llm
    s = llm.describe(config=_awq(tmp_path, bits))
    assert s.quant == "awq" and s.quant_bits == bits
    with pytest.raises(UserError, match=f"{bits}-bit AWQ does not load in vLLM.*only 4-bit weight quantization"):
        llm.plan(s, "vllm", ctx=4096)
    with pytest.raises(UserError, match="only 4-bit weight quantization"):
        llm.plan(s, "vllm", ctx=4096, weights_dtype="awq")      # the same checkpoint named by its format


def test_a_4_bit_awq_and_a_3_bit_gptq_are_still_sized_for_vllm(tmp_path):
    from gpu_garden.memory.llm import kv as llm
    (tmp_path / "g").mkdir()
    (tmp_path / "f").mkdir()
    awq4 = llm.describe(config=_awq(tmp_path / "f", 4))
    assert llm.plan(awq4, "vllm", ctx=4096)["weights"] > 0                      # 4-bit AWQ: sized
    gptq3 = llm.describe(config=_awq(tmp_path / "g", 3, method="gptq"))
    assert llm.plan(gptq3, "vllm", ctx=4096)["weights"] > 0                     # GPTQ's row is not AWQ's


def test_the_cli_refuses_a_3_bit_awq_for_vllm_in_one_line(tmp_path, capsys):
    from gpu_garden.memory import cli
    assert cli.main(["kv", "--config", _awq(tmp_path, 3), "--runtime", "vllm", "--ctx", "4096"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "only 4-bit weight quantization" in err


def test_a_3_bit_awq_drafter_is_refused(tmp_path):
    qc = {"quant_method": "awq", "bits": 3, "group_size": 128, "zero_point": True}
    with pytest.raises(UserError, match="3-bit AWQ does not load in vLLM"):
        vllm_drafter.read_drafter("dflash", write_drafter(tmp_path, quantization_config=qc))
