"""Task fix20c: review20b's kv finding. Fails when its rule is broken on purpose (the commit says how)."""
import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import gguf_repo
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB


# MXFP4_EXPERTS_<type> is kv's own name for a 16/32-bit GGUF of an MXFP4 checkpoint (weights.MXFP4_EXPERTS, set by
# plan_weights for gpt-oss given F16/BF16/F32), like an Ollama library build's variant: no GGUF file type has that name.
# Given by a user for any model it sized a dense model as "0.00 B expert params ... MXFP4" + 16-bit rest; now refused.
@pytest.mark.parametrize("dtype", ["MXFP4_EXPERTS_F16", "mxfp4_experts_bf16", " MXFP4_EXPERTS_F32"])
@pytest.mark.parametrize("model,runtime", [("qwen3:4b", "llama.cpp"), ("openai/gpt-oss-20b", "ollama"),
                                           ("openai/gpt-oss-20b", "vllm")])
def test_the_mxfp4_experts_name_is_no_weights_dtype(dtype, model, runtime):
    s = llm.describe(model=model)
    with pytest.raises(UserError, match=r"internal name for a 16/32-bit GGUF of an MXFP4 checkpoint.*give the file's "
                                        r"type \((F16|BF16|F32)\)"):
        llm.plan(s, runtime, ctx=4096, weights_dtype=dtype, vram=24 * GiB)


def test_cli_refuses_the_mxfp4_experts_name(capsys):
    assert cli.main(["kv", "--model", "qwen3:4b", "--runtime", "llama.cpp", "--weights-dtype", "MXFP4_EXPERTS_F16",
                     "--vram", "12"]) == 2
    err = capsys.readouterr().err
    assert "internal name" in err and "give the file's type (F16)" in err


def test_the_internal_names_are_no_gguf_tag_but_their_sources_still_size():
    assert gguf_repo.tag_type("MXFP4_EXPERTS_F16") is None and gguf_repo.tag_type("F16") == "F16"
    with pytest.raises(UserError, match="names no GGUF quantization"):
        llm.describe(model="unsloth/gpt-oss-20b-GGUF:MXFP4_EXPERTS_F16")
    # what sets the name internally still sizes with it: gpt-oss given F16 keeps its experts in MXFP4
    r = llm.plan(llm.describe(model="openai/gpt-oss-20b"), "llama.cpp", ctx=4096, weights_dtype="F16")
    assert "MXFP4, as every gpt-oss GGUF keeps them" in r["weights_how"]
