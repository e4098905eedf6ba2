"""Task ellm29: LLM batch 42 after its first sight (regression rows), each change checked by hand against the
runtime's source, its printed figures or a config.json's arithmetic."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


@pytest.mark.parametrize("repo, builtin", [
    ("mistralai/Mistral-Nemo-Base-2407", "Mistral-Nemo-12B"),   # Mistral-Nemo-12B.json's _source
    ("CohereForAI/c4ai-command-r-v01", "Command-R-v01"),        # Command-R-v01.json's _source
])
def test_a_builtins_own_repo_resolves(repo, builtin):
    # suggestions() offers these repo ids; before, both were refused as unknown
    assert llm.describe(model=repo).name == builtin


def test_mistral_nemo_instruct_2407():
    # deepyes02/yeti-ai llama_server.log (b6050): the Instruct-2407 GGUF, 'Metal KV buffer size = 640.00 MiB' at 4096
    # cells, f16: 40 layers x 2 x 8 KV heads x 128 x 2 bytes = 163,840 B a cell
    s = llm.describe(model="mistralai/Mistral-Nemo-Instruct-2407")
    assert s.name == "Mistral-Nemo-12B"
    assert s.max_ctx == 131072  # the Instruct config's max_position_embeddings (the Base says 1,024,000)
    assert llm.describe(model="mistralai/Mistral-Nemo-Base-2407").max_ctx == 1024000
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype="Q5_K_M")
    assert r["kv_per_token"] == 40 * 2 * 8 * 128 * 2 == 163_840
    assert r["kv_total"] == 4096 * 163_840 == 640 * MiB
    # untied: 2 x 131072 x 5120 + 40 x (5120 x 4096 x 2 + 5120 x 1024 x 2 + 3 x 5120 x 14336 + 2 x 5120) + 5120
    assert s.params == 1_342_177_280 + 40 * 272_640_000 + 5120 == 12_247_782_400


def test_other_nemo_models_are_not_read_as_it():
    with pytest.raises(UserError, match="unknown model"):
        llm.describe(model="nvidia/Mistral-NeMo-Minitron-8B-Base")
