"""vLLM's hybrid pool under MTP speculative decoding (Qwen 3.5+). Expected values are hand arithmetic from vLLM's code
and Qwen3.6-27B's config.json, checked against the two club-3090 runs that print tokens and concurrency together:
  - mamba_utils.gated_delta_net_state_shape: conv state (conv_kernel_size - 1 + num_spec) x conv_dim / tp in the model
    dtype, recurrent state num_v_heads / tp x 128 x 128 in float32 (mamba_ssm_dtype);
  - kv_cache_interface.MambaSpec.max_memory_usage_bytes: (2 + num_speculative_blocks) pages in "align" mode (prefix
    caching), num_speculative_blocks = num_speculative_tokens (layers/mamba/abstract.py);
  - the attention block: 16 x cdiv(state page, 16 x attention bytes a token), the state page padded to it."""
from gpu_garden.memory.llm import cache, kv as llm

# Qwen3.6-27B: 16 key heads and 48 value heads x 128, conv kernel 4 -> conv_dim 2 x 16 x 128 + 48 x 128 = 10240;
# 16 full-attention layers of 4 KV heads x 256; one MTP layer (17 full layers: groups of 17, 3 DeltaNet groups)
CONV_DIM, V_HEADS, KV_HEADS, HEAD = 10240, 48, 4, 256


def _hand(tp, spec_tokens, ctx=262144):
    """(block tokens, page bytes, blocks a request) at an fp8 cache, prefix caching on."""
    state = CONV_DIM // tp * (3 + spec_tokens) * 2 + V_HEADS // tp * 128 * 128 * 4
    per_token = KV_HEADS // tp * HEAD * 2 * 1
    block = 16 * -(-state // (16 * per_token))
    return block, block * per_token, -(-ctx // block) + 3 * (2 + spec_tokens)


def _pool(tp, blocks, spec_tokens, new_form):
    s = llm.vllm_per_rank(llm.describe(model="Qwen/Qwen3.6-27B"), tp)
    block, page, _ = _hand(tp, spec_tokens)
    return cache.vllm_pool(s, blocks * 17 * page, "fp8", 262144, max_batched=8192, draft_layers=1,
                           spec_tokens=spec_tokens, tokens_from_concurrency=new_form, state_blocks=2)


def test_hand_arithmetic_of_the_three_token_state_page():
    # TP 2: 5120 x 6 x 2 + 24 x 128 x 128 x 4 = 1,634,304 bytes; 1024 bytes a token -> 100 x 16 = 1600 tokens
    assert _hand(2, 3) == (1600, 1600 * 1024, 164 + 15)
    assert _hand(2, 0)[:2] == (1568, 1568 * 1024)  # without MTP: 98 x 16
    lay = cache.vllm_layout(cache.with_draft_layers(
        llm.vllm_per_rank(llm.describe(model="Qwen/Qwen3.6-27B"), 2), 1, 3), "fp8")
    assert lay["block"] == {"full": 1600, "linear": 1600} and lay["page"] == 1600 * 1024
    assert lay["size"] == 17 and lay["groups"] == {"full": 1, "linear": 3}


def test_club3090_tp2_prints_424_blocks_of_179():
    # club-3090#295 (TP 2, fp8_e5m2, MTP 3 tokens, 262,144): 'GPU KV cache size: 620,944 tokens', 2.37x.
    # 424 x 262144 / 179 = 620,944.4 and 424 / 179 = 2.369; with 2 state pages a request (174 blocks of 1568) no
    # whole block count gives 620,944
    got = _pool(2, 424, 3, new_form=True)
    assert got["tokens"] == 620944
    assert round(got["concurrency"], 2) == 2.37
    assert all(int(n * 262144 / 174) != 620944 for n in range(400, 450))


def test_club3090_tp4_prints_1211_blocks_of_179():
    # club-3090 e3f8f020 dual4.yml (TP 4, vLLM 0.20.1rc1, blocks // groups x block): 483,200 tokens and 6.77x:
    # 1211 // 4 x 1600 = 483,200 and 1211 / 179 = 6.765
    got = _pool(4, 1211, 3, new_form=False)
    assert got["tokens"] == 483200 == 1211 // 4 * 1600
    assert round(got["concurrency"], 2) == 6.77


def test_plan_passes_the_speculative_tokens_to_the_pool():
    r = llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=262144, kv_dtype="fp8", weights_dtype="auto_round",
                 vram=23.56 * (1 << 30), gpu_memory_utilization=0.92, gpu_name="NVIDIA GeForce RTX 3090",
                 tensor_parallel_size=4, max_num_seqs=4, max_num_batched_tokens=8192, runtime_version="0.20.1",
                 mtp_tokens=3, prefix_caching=True)
    assert r["kv_detail"]["pool_args"]["spec_tokens"] == 3
    # 179 blocks a request: the printed concurrency is whole blocks of it
    assert abs(r["concurrency"] * 179 - round(r["concurrency"] * 179)) < 1e-6
