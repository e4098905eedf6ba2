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
    # a repo id outside kv's table of published drafters (vllm_drafter.PUBLISHED, task dfl49)
    with pytest.raises(UserError, match="nor a drafter kv describes by name .*download its config.json"):
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


# 4. An 8-bit GPTQ checkpoint was read as int8 (8.00 bits a weight): its per-group fp16 scale and packed zero point,
# counted for 4-bit GPTQ by linear_bits (4 + 20/128), were not. One formula now for every width b: b + (16 + b)/g
# with the zero kept, b + 16/g where a symmetric config meets a GPTQ-Marlin width (4, 8). Breaking it: _quant_bits
# without its 8 (the checkpoint is int8 again) or linear_bits back to a 4-bit zero at 8 bits.
#
# By hand, Qwen2.5-7B's geometry (28 layers, hidden 3584, 28 heads of 128, 4 KV heads, MLP 18944, vocab 152064, untied):
#   matmul params (kv's linear_params: q, k, v with their biases, o, gate, up, down)
#     = 28 x (3584x3584 + 3584 + 2 x (3584x512 + 512) + 3584x3584 + 3 x 3584x18944) = 6,525,417,472
#   other params (token table and head, 2 norms a layer, the final norm), 16-bit
#     = 2 x 152064x3584 + 28 x 2 x 3584 + 3584 = 1,090,199,040 -> x 2 bytes = 2,180,398,080
#   a group of 128 weights at 8 bits: 128 x 8 values + one fp16 scale (16) + one zero at 8 bits (qzeros: 4 a word)
#     = 1048 bits = 8.1875 bits a weight -> 6,525,417,472 x 8.1875 / 8 = 6,678,356,944 (+ 2,180,398,080 = 8,858,755,024)
#   symmetric (sym: true; GPTQ-Marlin's uint8b128 drops qzeros): 8 + 16/128 = 8.125
#     -> 6,525,417,472 x 8.125 / 8 = 6,627,377,120 (+ 2,180,398,080 = 8,807,775,200)
#   before: 8.00 bits -> 6,525,417,472 + 2,180,398,080 = 8,705,815,552
@pytest.mark.parametrize("sym,expected", [(None, 8_858_755_024), (False, 8_858_755_024), (True, 8_807_775_200)])
def test_an_8_bit_gptq_checkpoint_counts_its_scales_and_zeros(tmp_path, sym, expected):
    from gpu_garden.memory.llm import kv as llm, weights as W
    q = {"quant_method": "gptq", "bits": 8, "group_size": 128, "desc_act": False}
    if sym is not None:
        q["sym"] = sym
    (tmp_path / "config.json").write_text(json.dumps(dict(QWEN, quantization_config=q)))
    s = llm.describe(config=str(tmp_path / "config.json"))
    assert (s.quant, s.quant_bits, s.quant_group) == ("gptq", 8, 128)
    assert W.weights_by_role(s)["total"] == expected


def test_8_bit_gptq_reads_its_group_size_from_the_config():
    from gpu_garden.memory.llm import weights as W
    # groups of 32: one scale and one 8-bit zero a 32 weights = 8 + 24/32 = 8.75; of 64, symmetric: 8 + 16/64 = 8.25
    assert W.linear_bits("gptq", 32, None, 8) == 8.75
    assert W.linear_bits("gptq", 64, True, 8) == 8.25
    assert W.linear_bits("gptq", 128, None, 4) == 4 + 20 / 128     # the 4-bit layout unchanged: 4.15625
    assert W.linear_bits("gptq", 128, True, 4) == 4.125


def test_an_8_bit_gptq_drafter_counts_its_scales_and_zeros(tmp_path):
    qc = {"quant_method": "gptq", "bits": 8, "group_size": 128, "sym": False}
    g = vllm_drafter.read_drafter("dflash", write_drafter(tmp_path, quantization_config=qc))
    assert g["format"] == "gptq" and g["proj_bits"][0][0] == ("self_attn.q_proj", 8 + 24 / 128)


def test_a_gptq_int8_name_is_8_bit_gptq_with_its_scales_and_zeros():
    from gpu_garden.memory.llm import kv as llm, weights as W
    s = llm.describe(model="Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8")
    assert (s.quant, s.quant_bits) == ("gptq", 8)
    # the same geometry as the config above, no `sym` in a name (zeros kept): 8,858,755,024 bytes (worked above)
    assert W.weights_by_role(s)["total"] == 8_858_755_024
    assert llm.describe(model="Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4").quant_bits is None      # 4: the format's own


def test_a_symmetric_8_bit_gptq_on_a_pre_ampere_card_gets_the_zeros_exllama_builds(tmp_path):
    # below compute 8.0 no Marlin: ExllamaLinearKernel builds the zero tensor a symmetric checkpoint lacks, packed at the
    # weights' width: 6,525,417,472 matmul params (above) x 8 bits / 128 / 8 = 50,979,824 bytes on a T4, none on an A100.
    from gpu_garden.memory.llm import kv as llm
    q = {"quant_method": "gptq", "bits": 8, "group_size": 128, "sym": True}
    (tmp_path / "config.json").write_text(json.dumps(dict(QWEN, quantization_config=q)))
    s = llm.describe(config=str(tmp_path / "config.json"))
    t4 = llm.plan(s, "vllm", ctx=2048, gpu_name="Tesla T4")["weights"]
    a100 = llm.plan(s, "vllm", ctx=2048, gpu_name="NVIDIA A100-SXM4-80GB")["weights"]
    assert t4 - a100 == 50_979_824


# 5. plan(n_cpu_moe=...) for a runtime other than llama.cpp was silently ignored (the figures as without it), where the
# CLI refuses --n-cpu-moe / --cpu-moe for them ("vLLM does not read --n-cpu-moe (llama.cpp)"). The API now refuses it
# from the same table row (plan_checks.READ_BY, which report._refuse_unread reads too). Breaking it: the row out.
@pytest.mark.parametrize("runtime", ["vllm", "sglang", "ollama"])
def test_the_api_refuses_n_cpu_moe_where_the_cli_does(runtime, capsys):
    from gpu_garden.memory import cli
    from gpu_garden.memory.llm import kv as llm
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    for n in (4, 0):
        with pytest.raises(UserError, match=f"{runtime} does not read n_cpu_moe .*llama.cpp only"):
            llm.plan(s, runtime, ctx=4096, n_cpu_moe=n)
    assert cli.main(["kv", "--model", "Qwen/Qwen3-30B-A3B", "--runtime", runtime, "--ctx", "4096", "--n-cpu-moe", "4"]) == 2
    assert "does not read --n-cpu-moe (llama.cpp)" in capsys.readouterr().err


def test_llama_cpp_still_reads_n_cpu_moe():
    from gpu_garden.memory.llm import kv as llm
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q4_K_M", n_cpu_moe=4)
    assert r["n_cpu_moe"] == 4 and r["host_experts_full"] > 0
    assert llm.plan(s, "vllm", ctx=4096, n_cpu_moe=None)["weights"] > 0     # absent is absent
