"""review25: mends to session 24's changes, each with a test that fails without it."""
import json

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

QWEN = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
        "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
        "max_position_embeddings": 32768, "torch_dtype": "float16", "tie_word_embeddings": False}


def _awq(tmp_path, bits):
    q = {"quant_method": "awq", "bits": bits, "group_size": 128, "zero_point": True}
    (tmp_path / "config.json").write_text(json.dumps(dict(QWEN, quantization_config=q)))
    return str(tmp_path / "config.json")


# 1. SGLang's AWQConfig raises "Currently, only 4-bit weight quantization is supported for AWQ, but got {bits} bits."
# as vLLM's does (python/sglang/srt/layers/quantization/awq.py at sgl-project/sglang 0149944f; AWQ-Marlin takes 4 and
# 8 only, so a 2/3-bit config falls to AWQConfig). fix25 refused a 2/3-bit AWQ for vLLM only; SGLang sized it.
# Breaking it: the ("sglang", "awq") row of vllm_loader.QUANT_WIDTHS out, or plan_weights' check back to vLLM only.
@pytest.mark.parametrize("bits", [3, 2])
def test_a_low_bit_awq_checkpoint_is_refused_for_sglang(tmp_path, bits):
    s = llm.describe(config=_awq(tmp_path, bits))
    with pytest.raises(UserError, match=f"{bits}-bit AWQ does not load in SGLang.*only 4-bit weight quantization"):
        llm.plan(s, "sglang", ctx=4096)


def test_a_4_bit_awq_is_still_sized_for_sglang_and_a_3_bit_one_for_llamacpp(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert llm.plan(llm.describe(config=_awq(tmp_path / "a", 4)), "sglang", ctx=4096)["weights"] > 0
    assert llm.plan(llm.describe(config=_awq(tmp_path / "b", 3)), "llama.cpp", ctx=4096)["weights"] > 0


# 2. Round 52 gave plan() a meaning for prefix_caching (vLLM's state pages a request), but the Python API took it for
# llama.cpp, Ollama or SGLang and changed nothing, and took any truthy value ('no') as on, printing
# --enable-prefix-caching; fix25 refused n_cpu_moe this way, the CLI refuses the option. Breaking it: the
# prefix_caching row of plan_checks.READ_BY out, or check_names' True/False/None check out.
@pytest.mark.parametrize("runtime", ["llama.cpp", "ollama", "sglang"])
@pytest.mark.parametrize("value", [True, False])
def test_the_api_refuses_prefix_caching_for_a_runtime_that_does_not_read_it(runtime, value):
    s = llm.describe(model="Qwen/Qwen3.5-4B")
    with pytest.raises(UserError, match=r"does not read prefix_caching \(--enable-prefix-caching"):
        llm.plan(s, runtime, ctx=4096, prefix_caching=value)


@pytest.mark.parametrize("value", ["no", 0, 1, "false"])
def test_prefix_caching_is_true_false_or_none(value):
    s = llm.describe(model="Qwen/Qwen3.5-4B")
    with pytest.raises(UserError, match="prefix_caching is True"):
        llm.plan(s, "vllm", ctx=4096, prefix_caching=value)


def test_vllm_still_reads_prefix_caching():
    s = llm.describe(model="Qwen/Qwen3.5-4B")
    on, off = (llm.plan(s, "vllm", ctx=4096, vram=24 << 30, prefix_caching=v) for v in (True, False))
    assert on["command"].endswith(" --enable-prefix-caching") and off["command"].endswith(" --no-enable-prefix-caching")
    assert on["kv_capacity_tokens"] < off["kv_capacity_tokens"]     # two state pages a request, not one


# 3. `--no-enable-prefix-caching` given for another runtime was refused as "--enable-prefix-caching (vLLM)", naming
# the option the user did not type. Breaking it: report._refuse_unread's 'no-' prefix out.
def test_the_cli_names_the_no_option_it_was_given(capsys):
    from gpu_garden.memory import cli
    assert cli.main(["kv", "--model", "qwen3:8b", "--runtime", "ollama", "--no-enable-prefix-caching"]) == 2
    err = capsys.readouterr().err
    assert "does not read --no-enable-prefix-caching (vLLM)" in err and "Traceback" not in err
    assert cli.main(["kv", "--model", "qwen3:8b", "--runtime", "llama.cpp", "--enable-prefix-caching"]) == 2
    assert "does not read --enable-prefix-caching (vLLM)" in capsys.readouterr().err
