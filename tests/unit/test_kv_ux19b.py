"""What ux19's first-hour review of the CLI left (ux19b): defaults and messages a new user reads."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import sglang_max_len


def test_sglang_default_context_is_the_models_own():
    # SGLang's ModelConfig._derive_context_length takes get_context_length(hf_text_config) when --context-length is
    # not given: Qwen2.5-7B-Instruct's config.json says max_position_embeddings 32768, no rope_scaling
    r = llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), runtime="sglang")
    assert r["ctx"] == 32768
    # llama-server keeps 4096 in builds b4020-b7399 (the newest: test_kv_ellm19c)
    assert llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), runtime="llama.cpp",
                    runtime_version="b6500")["ctx"] == 4096


def test_sglang_context_rule_reads_keys_and_rope_as_sglang_does():
    assert sglang_max_len({"max_position_embeddings": 32768}) == 32768
    # a bare factor multiplies (linear scaling over 4096: 16384)
    assert sglang_max_len({"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 4.0}}) == 16384
    # YaRN naming original_max_position_embeddings and llama3 do not: DeepSeek-V3's 163840, Llama 3.1's 131072
    assert sglang_max_len({"max_position_embeddings": 163840, "rope_scaling": {
        "type": "yarn", "factor": 40, "original_max_position_embeddings": 4096}}) == 163840
    assert sglang_max_len({"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}) == 131072
    # the first key of SGLang's list wins, not the smallest (vLLM's rule)
    assert sglang_max_len({"seq_length": 8192, "max_position_embeddings": 4096}) == 8192
    assert sglang_max_len({}) is None


def _org_notes(name):
    return [n for n in llm.describe(model=name).notes if "organisation" in n]


def test_an_organisation_kv_does_not_read_is_named_in_one_note():
    # 'meta-lama' (a typo of meta-llama) resolved silently to Llama-3.1-8B: the name's organisation is not read
    notes = _org_notes("meta-lama/Llama-3.1-8B-Instruct")
    assert notes == ["'meta-lama/Llama-3.1-8B-Instruct' read as the built-in Llama-3.1-8B, meta-llama/Llama-3.1-8B's "
                     "config.json: the organisation 'meta-lama' is not read (an upload under any name keeps the "
                     "architecture)"]
    assert len(_org_notes("unsloth/Llama-3.1-8B-Instruct")) == 1
    # the organisation the built-in was read from, and a bare name, say nothing more
    assert _org_notes("meta-llama/Llama-3.1-8B-Instruct") == [] and _org_notes("llama-3.1-8b") == []
    assert _org_notes("Qwen/Qwen2.5-7B-Instruct") == []


def _gguf_notes(name, **kw):
    r = llm.plan(llm.describe(model=name), runtime="llama.cpp", ctx=8192, **kw)
    return [n for n in r["notes"] if n.startswith("llama.cpp runs GGUF files")]


def test_llama_cpp_says_a_checkpoint_type_is_no_gguf():
    # 'kv --model deepseek-v3 --runtime llama.cpp' sized 626.77 GiB of fp8, which no GGUF file holds, without a word
    assert _gguf_notes("deepseek-v3") == [
        "llama.cpp runs GGUF files: the weights above are sized as fp8 (the checkpoint's), a type no GGUF file holds; "
        "size the file llama.cpp loads with --weights-dtype Q4_K_M (Q8_0, IQ4_XS, ...), --gguf FILE or a GGUF repo "
        "name (user/repo-GGUF:Q4_K_M)"]
    assert len(_gguf_notes("Qwen/Qwen2.5-7B-Instruct", weights_dtype="awq")) == 1
    # a GGUF type, a 16-bit checkpoint (a BF16 GGUF), an Ollama tag's build and gpt-oss's MXFP4 file type say nothing
    assert _gguf_notes("deepseek-v3", weights_dtype="Q4_K_M") == []
    assert _gguf_notes("Qwen/Qwen2.5-7B-Instruct") == [] and _gguf_notes("qwen2.5:7b") == []
    assert _gguf_notes("openai/gpt-oss-20b") == []


@pytest.mark.parametrize("name, runtime", [
    ("hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", "ollama"),    # `ollama run hf.co/...:<quant>`: Ollama's syntax
    ("HuggingFace.co/bartowski/Qwen2.5-7B-Instruct-GGUF", "ollama"),  # the other domain Hugging Face's Ollama page names
    ("qwen2.5:7b", "ollama"),
    ("bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", "vllm"),            # llama.cpp's -hf form names no runtime of its own
    ("Qwen/Qwen2.5-7B-Instruct", "vllm")])
def test_default_runtime_follows_the_names_syntax(name, runtime, capsys):
    from gpu_garden.memory import cli
    cli.main(["kv", "--model", name, "--vram", "24"])
    assert capsys.readouterr().out.splitlines()[1].startswith(f"runtime {runtime} ")
