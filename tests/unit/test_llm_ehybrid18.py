"""vLLM --mamba-ssm-cache-dtype (task ehybrid18). Expected values are what a run printed (source named) or the
config.json arithmetic of the description, never the code's own figure."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import cache as C
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def test_float16_ssm_state_gives_the_printed_800_token_block():
    # alpharomercoma/qwen3.8-27b-rtx4090-vllm docs/benchmarks/FINDINGS.md (6), runs with --mamba-ssm-cache-dtype float16
    # and fp8 KV on one RTX 4090: "Attention blocks are stretched to the size of one GDN state page: 800 tokens at fp8
    # KV". config.json: 48 value heads x 128 x 128 of ssm state, conv (2 x 16 x 128 + 48 x 128) x 3 in bf16; 16 attention
    # layers of 4 KV heads x 256, K and V, 1 byte: 2048 bytes a token. float16: 16 x ceil(1634304 / 32768) = 800;
    # the config's float32 (the default, nekolegends' "Setting attention block size to 1568 tokens"): 1568.
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    assert C.vllm_layout(C.with_ssm_cache_dtype(s, "float16"), "fp8")["block"]["full"] == 800
    assert C.vllm_layout(C.with_ssm_cache_dtype(s, "bfloat16"), "fp8")["block"]["full"] == 800
    assert C.vllm_layout(C.with_ssm_cache_dtype(s, "auto"), "fp8")["block"]["full"] == 1568
    assert C.vllm_layout(C.with_ssm_cache_dtype(s, "float32"), "fp8")["block"]["full"] == 1568


def _alpha(**knobs):
    # the same repo's pod/serve.sh config vllm-int4: vLLM 0.30.0, RTX 4090 (23.55 GiB), RedHatAI INT4 W4A16,
    # --language-model-only, 0.95, fp8 KV, 2048 batched tokens, 65536, 16 seqs, prefix caching (REPORT.md, below)
    return llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "vllm", ctx=65536, kv_dtype="fp8", weights_dtype="gptq",
                    vram=23.55 * GiB, gpu_memory_utilization=0.95, gpu_name="NVIDIA GeForce RTX 4090",
                    max_num_seqs=16, max_num_batched_tokens=2048, runtime_version="0.30.0", language_model_only=True,
                    prefix_caching=True, **knobs)


def test_plan_pages_the_pool_with_the_given_state_type():
    # the same pool in pages of half the bytes: a 65536-token request needs ceil(65536 / 800) = 82 attention blocks and
    # 2 state pages in each of the 3 DeltaNet groups (prefix caching), 88 pages of 16 x 800 x 2048 bytes; with the
    # float32 state ceil(65536 / 1568) = 42 + 6 = 48 pages of 16 x 1568 x 2048 bytes
    f32, f16 = _alpha(), _alpha(mamba_ssm_cache_dtype="float16")
    assert f16["kv_capacity_bytes"] == f32["kv_capacity_bytes"]  # the state type moves no other term
    pool = f16["kv_capacity_bytes"]
    assert f16["concurrency"] == pytest.approx((pool // (16 * 800 * 2048)) / 88)
    assert f32["concurrency"] == pytest.approx((pool // (16 * 1568 * 2048)) / 48)
    assert "--mamba-ssm-cache-dtype float16" in f16["command"]
    assert "--mamba-ssm-cache-dtype" not in f32["command"]


def test_bad_state_type_and_models_without_state_are_refused():
    with pytest.raises(UserError):
        _alpha(mamba_ssm_cache_dtype="fp8")
    with pytest.raises(UserError):  # no DeltaNet / Mamba-2 layer: nothing the flag would change
        llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "vllm", ctx=4096, mamba_ssm_cache_dtype="float16")
    with pytest.raises(UserError):  # llama.cpp keeps its recurrent state in f32 whatever vLLM's flag says
        llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "llama.cpp", ctx=4096, mamba_ssm_cache_dtype="float16")


def test_printed_pool_is_whole_blocks_only_with_the_float16_state():
    # REPORT.md of the same repo: 'vLLM fp8 ... 84,898-token pool (host 1)' at 65536 with prefix caching (vllm-int4).
    # vLLM >= 0.22 prints concurrency x max_model_len: 114 blocks / 88 a request x 65536 = 84,898.9 with the float16
    # state's 800-token blocks; with the float32 state's 1568-token blocks (48 a request) 62 blocks give 84,650 and 63
    # give 86,016: no whole block count prints 84,898
    s = C.with_ssm_cache_dtype(llm.describe(model="Qwen/Qwen3.8-27B"), "float16")
    lay = C.vllm_layout(s, "fp8")
    args = dict(max_batched=2048, state_blocks=2, tokens_from_concurrency=True)
    assert C.vllm_pool(s, 114 * lay["size"] * lay["page"], "fp8", 65536, **args)["tokens"] == 84898
    s32 = llm.describe(model="Qwen/Qwen3.8-27B")
    lay32 = C.vllm_layout(s32, "fp8")
    assert 84898 not in [C.vllm_pool(s32, b * lay32["size"] * lay32["page"], "fp8", 65536, **args)["tokens"]
                         for b in range(40, 80)]


def test_xpu_b70_pages_give_the_printed_need_at_100k():
    # SergiioB's Windows kit, issue 4: "To serve at least one request with the model's max seq len (100000), (4.26 GiB KV
    # cache is needed, which is larger than the available KV cache memory (4.25 GiB)", Qwen3.8-27B GPTQ + MTP 4, fp8 KV,
    # --kv-cache-memory 4563402752, one Intel Arc Pro B70 (vLLM XPU image). The state page (48 x 128 x 128 float32 + 3 + 4
    # conv rows of 10240 in bf16, MTP 4 widening the conv state) holds 16 x ceil(3289088 / 32768) = 1616 tokens of the
    # 2048-byte fp8 cache; XPU rounds that up to 1664 (a multiple of 64). 17 attention layers (16 + the drafter's) and 48
    # state layers in groups of 17: a request takes ceil(100000 / 1664) = 61 blocks of the full group + 3 groups x (2 + 4)
    # state pages = 79 pages of 17 x 1664 x 2048 bytes = 4.26 GiB; on a CUDA card 62 + 18 = 80 pages of 17 x 1616 x 2048
    # = 4.19 GiB, which the 4.25 GiB pool would hold. The 2 + 4 pages are prefix caching's ("align"): without it 1 + 4
    # give 76 pages, 4.10 GiB, so the printed need says the kit runs with --enable-prefix-caching
    def run(card):
        return llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "vllm", ctx=100000, kv_dtype="fp8", weights_dtype="gptq",
                        vram=32 * GiB, gpu_memory_utilization=0.75, kv_cache_memory=4563402752, max_num_seqs=1,
                        mtp_tokens=4, gpu_name=card, prefix_caching=True)
    xpu, cuda = run("Intel Arc Pro B70"), run("NVIDIA GeForce RTX 5090")
    assert xpu["kv_request_bytes"] == 79 * 17 * 1664 * 2048
    assert round(xpu["kv_request_bytes"] / GiB, 2) == 4.26
    assert cuda["kv_request_bytes"] == 80 * 17 * 1616 * 2048
    assert xpu["fits_as_requested"] is False and cuda["fits_as_requested"] is True
