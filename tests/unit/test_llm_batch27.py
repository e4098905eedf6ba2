"""Batch 27 (read by ellm9). Expected values are what the runtimes printed, in the threads each test names."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _club3090_tp4(util, version, kv=None, seqs=4, **extra):
    # noonghunna/club-3090 e3f8f020 docker-compose.dual4*.yml: an int4 AutoRound Qwen3.6-27B on 4x RTX 3090 (23.56 GiB
    # as vLLM reports it), TP 4, 262,144 tokens, --max-num-batched-tokens 8192, vLLM nightly 0.20.1rc1.dev16
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=262144, kv_dtype=kv, weights_dtype="auto_round",
                    vram=23.56 * GiB, gpu_memory_utilization=util, gpu_name="NVIDIA GeForce RTX 3090",
                    tensor_parallel_size=4, max_num_seqs=seqs, max_num_batched_tokens=8192, runtime_version=version,
                    **extra)


def test_hybrid_tokens_before_024_are_blocks_per_group_not_concurrency_times_ctx():
    # 'GPU KV cache size: 483,200 tokens' next to 6.77x at 262,144 (fp8_e5m2, 0.92): the nightly prints blocks // groups
    # x the block, a quarter of 6.77 x 262,144 = 1.77 M for the four groups of 16 layers; read as the newest release
    # (concurrency x max_model_len) it is 1.87 M (+287 %)
    # (the nightly's own version string: 0.20.1 the release prints concurrency x max_model_len, kv-accuracy round 49)
    # the run drafts with MTP 3 (the bench row vllm-club3090-qwen36-27b-autoround-tp4-4x3090-262k-fp8-mtp): its drafter
    # layer shares the pool. Without it kv's figure was +3 % until task kv64 split the tower over the 4 ranks (0.313 GiB
    # less reserved a rank with Qwen3.6's 16,384-token dummy), then +5.5 %
    r = _club3090_tp4(0.92, "0.20.1rc1.dev16+g7a1eb8ac2", kv="fp8", mtp_tokens=3)
    assert abs(r["kv_capacity_tokens"] / 483200 - 1) <= 0.05
    newest = _club3090_tp4(0.92, None, kv="fp8")
    assert newest["kv_capacity_tokens"] > 3 * 483200


def test_a_name_carrying_a_base_models_name_and_size_is_that_architecture():
    # deepseek-ai/DeepSeek-R1-0528-Qwen3-8B: its config.json is Qwen3ForCausalLM with Qwen3-8B's geometry (36 layers, 8 KV
    # heads x 128). vLLM 0.9.1 on an RTX 3090 (solodba/LLMOps day01/homework.md) refused 32,768 tokens: '4.50 GiB KV
    # cache is needed' = 32768 x 36 x 2 x 8 x 128 x 2 bytes
    s = llm.describe(model="deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")
    assert s.name == "Qwen3-8B"
    r = llm.plan(s, "vllm", ctx=32768, vram=23.56 * GiB, gpu_name="NVIDIA GeForce RTX 3090", runtime_version="0.9.1")
    assert round(r["kv_total"] / GiB, 2) == 4.50
    assert llm.describe(model="someone/foo-qwen2.5-7b").name == "Qwen2.5-7B"


@pytest.mark.parametrize("repo", ["someone/llama-3.1-8b-to-qwen3-8b",   # two bases: never guessed
                                  "someone/eagle-qwen3-8b",             # a drafter for it, not it
                                  "someone/foo-qwen3-8b-1m",            # another size after it
                                  # EAGLE-3 drafters named after their base (one decoder layer, not the base):
                                  "Tengyunw/Qwen3-8B-Eagle3", "AngelSlim/Qwen3-8B_eagle3",
                                  "RedHatAI/Qwen3-8B-speculator.eagle3"])
def test_a_base_name_inside_another_name_is_not_read_when_it_may_not_be_the_architecture(repo):
    with pytest.raises(UserError):
        llm.describe(model=repo)


def test_qwen35_122b_a10b_parameters_as_llama_bench_prints_them():
    # kyuz0/amd-strix-halo-toolboxes, Qwen3.5-122B-A10B-UD-Q5_K_XL on b9193: 'qwen35moe 122B.A10B ... 122.11 B'
    r = llm.plan(llm.describe(model="Qwen/Qwen3.5-122B-A10B"), "llama.cpp", ctx=4096, weights_dtype="BF16")
    assert abs(r["weights"] / 2 / 1e9 - 122.11) <= 0.01


def test_qwen35_397b_a17b_cache_and_state_as_sglang_prints_them_at_tp2():
    # kvcache-ai/ktransformers#1870 (SGLang, TP 2): 'KV Cache is allocated. #tokens: 580364, K size: 4.15 GB' and 'Mamba
    # Cache is allocated. max_mamba_cache_size: 82, conv_state size: 0.13GB, ssm_state size: 7.29GB' (82 slots and one
    # more; SGLang's GB are GiB): 15 attention layers x 1 KV head x 256 a rank; 45 DeltaNet layers x 32 value heads x
    # 128 x 128 in float32 a rank
    s = llm.describe(model="Qwen/Qwen3.5-397B-A17B")
    r = llm.plan(s, "sglang", ctx=8192, tensor_parallel_size=2)
    assert round(r["kv_per_token"] / 2 * 580364 / GiB, 2) == 4.15
    conv, conv_bytes, ssm, ssm_bytes = llm.vllm_per_rank(s, 2).linear_state
    assert round(ssm * ssm_bytes * 45 * 83 / GiB, 2) == 7.29
    assert round(conv * conv_bytes * 45 * 83 / GiB, 2) == 0.13


def test_ollama_qwen35_tags_name_the_moe_by_its_total_and_latest_is_not_guessed():
    assert llm.describe(model="qwen3.5:122b").name == "Qwen3.5-122B-A10B"  # ollama/ollama#15709
    with pytest.raises(UserError, match="name one"):
        llm.describe(model="qwen3.5")


def _gptoss_weights(model, version, gpu, tp=1):
    r = llm.plan(llm.describe(model=model), "vllm", ctx=4096, vram=79.25 * GiB, gpu_name=gpu, tensor_parallel_size=tp,
                 runtime_version=version)
    return r["weights"] / GiB


def test_gptoss_launch_build_keeps_mxfp4_experts_unpadded_before_marlin():
    # vllm#22331: the gpt-oss launch image (0.10.1+gptoss) on an RTX 3090, 'Model loading took 12.8848 GiB'; Marlin's
    # padded layout (2944 x 3072 experts) would be 13.67 (+6.1 %)
    assert abs(_gptoss_weights("openai/gpt-oss-20b", "0.10.1+gptoss", "NVIDIA GeForce RTX 3090") / 12.8848 - 1) <= 0.01
    # the tagged 0.10.1.1 has Marlin's MXFP4 path (vllm#22428): gpt-oss-120b at TP 4 on A100s printed 17.2217 GiB
    # (dennislee22/vLLM-benchmarking), 15.9 unpadded
    assert abs(_gptoss_weights("openai/gpt-oss-120b", "0.10.1.1", "NVIDIA A100 80GB", tp=4) / 17.2217 - 1) <= 0.01


def test_mtp_drafter_layer_joins_the_pool_and_its_module_the_weights():
    # club-3090 e3f8f020 dual4.yml (TP 4, fp8, 3 MTP tokens): 'Maximum concurrency for 262,144 tokens per request: 6.77x';
    # 17 full-attention layers make groups of 17 (6.85x); the drafter's weights without its layer give 7.28x (+7.5 %)
    r = llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=262144, kv_dtype="fp8", weights_dtype="auto_round",
                 vram=23.56 * GiB, gpu_memory_utilization=0.92, gpu_name="NVIDIA GeForce RTX 3090",
                 tensor_parallel_size=4, max_num_seqs=4, max_num_batched_tokens=8192, runtime_version="0.20.1",
                 mtp_tokens=3)
    assert abs(r["concurrency"] / 6.77 - 1) <= 0.05
    # sostrowsk/dgx-spark-local-llm qwen38-int4.log (vLLM 0.25.1, RedHatAI/Qwen3.8-27B-INT4 W4A16, MTP 3, the vision
    # tower loaded: no limit_mm_per_prompt among its non-default args): 'Model loading took 18.5 GiB memory'; kv 18.11
    # with the MTP module, 17.32 without it (-6.4 %).
    # Until round 58 this half held syv-ai/qwen38-27b-rtx3090#39's 'available KV cache memory (1.56 GiB)' at these
    # inputs without --language-model-only. That run is `bash single-user/start_qwen.sh` (the commenter's log: vLLM
    # 0.28.0, models/Qwen3.8-27B-W4A16-AutoRound), and every revision of that script in the repository (b2c7e04 to
    # b356e31) passes --language-model-only: the run built no vision tower, and kv with the flag leaves 3.10 GiB, so
    # the 1.56 held only while kv counted a tower the run did not load (kv-accuracy round 58).
    r = llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "vllm", ctx=262144, weights_dtype="w4a16",
                 vram=121.63 * GiB, gpu_memory_utilization=0.85, max_num_seqs=32, gpu_name="NVIDIA GB10",
                 runtime_version="0.25.1", mtp_tokens=3)
    assert abs(r["weights"] / GiB / 18.5 - 1) <= 0.03
    assert """--speculative-config '{"method":"mtp","num_speculative_tokens":3}'""" in r["command"]


def test_mtp_tokens_needs_a_model_with_an_mtp_module_and_vllm():
    with pytest.raises(UserError, match="multi-token-prediction"):
        llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "vllm", ctx=4096, mtp_tokens=2)
    with pytest.raises(UserError, match="vLLM"):  # llama.cpp's draft-mtp is modelled (test_llm_llamtp.py), Ollama's not
        llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "ollama", ctx=4096, mtp_tokens=2)
    with pytest.raises(UserError, match="1-16"):
        llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=4096, mtp_tokens="3")
    with pytest.raises(UserError):   # 0 is not "no drafter": the flag asks for 1-16
        llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=4096, mtp_tokens=0)
