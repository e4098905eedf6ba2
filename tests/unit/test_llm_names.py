"""Names users type: Ollama library tags and Hugging Face repo ids with quantization suffixes."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB


@pytest.mark.parametrize("name, builtin, quant", [
    ("qwen2.5:7b", "Qwen2.5-7B", "Q4_K_M"), ("qwen2.5", "Qwen2.5-7B", "Q4_K_M"), ("llama3.1:8b", "Llama-3.1-8B", "Q4_K_M"),
    ("llama3.1:8b-instruct-q8_0", "Llama-3.1-8B", "Q8_0"), ("llama3.1:70b-instruct-q4_K_S", "Llama-3.1-70B", "Q4_K_S"),
    ("gemma3:12b", "Gemma-3-12B", "Q4_K_M"), ("gemma3:27b-it-qat", "Gemma-3-27B", "Q4_0_QAT"),
    ("gemma2:9b-instruct-fp16", "Gemma-2-9B", "F16"), ("qwen3:14b", "Qwen3-14B", "Q4_K_M"),
])
def test_ollama_tags(name, builtin, quant):
    s = llm.describe(model=name)
    assert (s.name, s.quant) == (builtin, quant)


@pytest.mark.parametrize("repo, builtin, quant", [
    ("RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8", "Llama-3.1-8B", "w8a8"),
    ("neuralmagic/Qwen2.5-7B-Instruct-quantized.w4a16", "Qwen2.5-7B", "w4a16"),
    ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "Llama-3.1-70B", "awq"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen2.5-7B", "gptq"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen2.5-7B", "gptq"),    # at 8 bits (spec.quant_bits: name_quant.NAME_WIDTHS)
    ("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", "Llama-3.1-8B", "fp8"),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen3-30B-A3B", None),
    ("deepseek-ai/DeepSeek-V3", "DeepSeek-V3", "fp8"),
])
def test_repo_id_suffixes(repo, builtin, quant):
    s = llm.describe(model=repo)
    assert (s.name, s.quant) == (builtin, quant)


def test_w4a16_and_w8a8_weights():
    s = llm.describe(model="Llama-3.1-8B")
    w16 = llm.weights(s, "bf16")[0]
    w8 = llm.weights(s, "w8a8")[0]
    w4 = llm.weights(s, "w4a16")[0]
    # Llama-3.1-8B: 6.98 B matmul parameters; embedding + head (1.05 B) and norms stay 16-bit
    assert 8.0 * GiB < w8 < 8.6 * GiB and 5.0 * GiB < w4 < 5.6 * GiB and w16 > 14.9 * GiB


def test_unknown_ollama_size_is_a_clear_error():
    # gemma3:1b is described since task ellm20 (Gemma-3-1B); gemma3:270m is not
    with pytest.raises(UserError, match="gemma3"):
        llm.describe(model="gemma3:270m")


# Batch 9 (benchmarks/data/llm_measured.json): repo ids with an uploader's or tool's word after the architecture
# failed as "unknown model" at first sight (johnson7788/RLDecisionAgent's Unsloth runs; xinyuwei-david/david-share).
@pytest.mark.parametrize("repo, builtin, quant", [
    ("unsloth/qwen2.5-0.5b-instruct-unsloth-bnb-4bit", "Qwen2.5-0.5B", "bnb-4bit"),
    ("unsloth/qwen3-4b-instruct-2507-unsloth-bnb-4bit", "Qwen3-4B", "bnb-4bit"),
    ("unsloth/qwen2.5-vl-7b-instruct-unsloth-bnb-4bit", "Qwen2.5-VL-7B", "bnb-4bit"),
    ("kaitchup/Phi-4-AutoRound-GPTQ-4bit", "Phi-4", "gptq"),
])
def test_words_after_the_architecture(repo, builtin, quant):
    s = llm.describe(model=repo)
    assert (s.name, s.quant) == (builtin, quant)
    assert any("read as the built-in" in n for n in s.notes)


@pytest.mark.parametrize("repo", ["someone/qwen2.5-72b-x", "someone/qwen2.5-7bx-foo"])
def test_the_prefix_stops_at_a_word_boundary(repo):
    # 'qwen2.5-72b-x' is the 72B (exact words), never the 7B; '7bx' names nothing (a leading word before a whole
    # sized name is a fine-tune's: test_llm_batch27)
    if repo.endswith("72b-x"):
        assert llm.describe(model=repo).name == "Qwen2.5-72B"
    else:
        with pytest.raises(UserError):
            llm.describe(model=repo)


@pytest.mark.parametrize("repo", ["someone/Qwen3-4B-distilled-from-8b", "someone/Phi-4-mini-flash-reasoning"])
def test_words_that_name_another_model_are_not_read_through(repo):
    # another size after the name is another model; Phi-4-mini-flash-reasoning is another architecture
    with pytest.raises(UserError):
        llm.describe(model=repo)


def test_phi4_mini_is_not_phi4():
    # Phi-4-mini is a 3.8 B model, not Phi-4 (14 B): its own built-in (ellm5)
    assert llm.describe(model="microsoft/Phi-4-mini-instruct").name == "Phi-4-mini"


@pytest.mark.parametrize("repo, builtin, quant", [
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "Qwen2.5-32B", None),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-8B", "Llama-3.1-8B", None),
    ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "Llama-3.3-70B", None),
    ("casperhansen/deepseek-r1-distill-qwen-14b-awq", "Qwen2.5-14B", "awq"),
])
def test_r1_distills_are_their_base_models(repo, builtin, quant):
    # never DeepSeek-R1 (671 B): the distilled models keep their base model's architecture
    s = llm.describe(model=repo)
    assert (s.name, s.quant) == (builtin, quant)
    assert any("distilled" in n for n in s.notes)


def test_ollama_deepseek_v2_libraries_are_v2_lite():
    # batch 20 (ollama#4799, ollama#5395): the deepseek-v2 and deepseek-coder-v2 libraries (June 2024) were unknown
    # names; their 16b tags (the default) are DeepSeek-V2-Lite's geometry, built Q4_0 by default like the other
    # libraries of that time (deepseek-coder-v2:16b is 8.9 GB on ollama.com: 15.7 B parameters x 4.5 bits)
    s = llm.describe(model="deepseek-coder-v2:16b")
    assert s.name == "DeepSeek-V2-Lite" and s.quant == "Q4_0"
    s = llm.describe(model="deepseek-v2:16b-lite-chat-q4_K_S")
    assert s.name == "DeepSeek-V2-Lite" and s.quant == "Q4_K_S"
    assert llm.describe(model="deepseek-v2").name == "DeepSeek-V2-Lite"
    with pytest.raises(UserError, match="unknown model"):   # 236b is full DeepSeek-V2: no built-in description
        llm.describe(model="deepseek-v2:236b")
    assert not any("distilled" in n for n in llm.describe(model="deepseek-v2:16b").notes)
