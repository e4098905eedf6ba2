"""Task ellm72 (kv-accuracy round 94, batch 98 after its first sight).

SGLang caps the running requests of a hybrid (gated-DeltaNet / Mamba-2) model at max_mamba_cache_size // mamba_ratio
and stops when that is 0 (model_runner_kv_cache_mixin _resolve_max_num_reqs: "Hybrid (mamba/linear-attention) state
cache is too small to serve any requests. max_mamba_cache_size=4, mamba_ratio=5, resulting max_num_reqs=0", the
refusal batch 98's physical-harness row printed at --mem-fraction-static 0.86). mamba_ratio is
MAMBA_CACHE_SIZE_MAX_RUNNING_REQUESTS_RATIO (3) with the radix cache and the no_buffer strategy that server_args
resolves "auto" to in the source read (akao-amd/sglang cf772ab4); extra_buffer adds 2 (the row's build).
kv now refuses a start whose state pool holds fewer than 3 request states; before, any positive KV pool started.
"""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import sglang as SG
from gpu_garden.memory.units import GiB, MiB

Q38 = "Qwen/Qwen3.8-27B"


def test_request_state_and_cell_of_qwen38_27b():
    spec = llm.describe(model=Q38)
    # one request state: 48 DeltaNet layers x (conv 3 x 10,240 channels x 2 bytes + 48 value heads x 128 x 128 x 4
    # bytes) = 48 x (61,440 + 3,145,728) = 153,944,064 bytes = 146.81 MiB (the doc's 'five 146.81 MB slots')
    assert SG.mamba_state_per_req(spec) == 48 * (3 * 10240 * 2 + 48 * 128 * 128 * 4) == 153_944_064
    assert round(153_944_064 / MiB, 2) == 146.81
    # a token of the pool: 16 full-attention layers x 4 KV heads x 256 x (K + V) x 2 bytes = 65,536 (the doc's 64 KiB)
    assert SG.cell_bytes(spec, "bf16") == 16 * 4 * 256 * 2 * 2 == 65_536
    assert SG.MAMBA_REQ_RATIO == 3


def test_ratio_split_too_small_for_one_request_is_refused():
    # vram 20 GiB, fraction 0.9: free0 = 20 GiB - 512 MiB = 20,937,965,568; budget 0.9 x free0 = 18,844,169,011.2;
    # weights 18,044,169,011 leave rest = 800,000,000.2 bytes. The states get rest x 0.9 / 1.9 = 378,947,368.5 bytes:
    # 2 states of 153,944,064 (307,888,128 bytes); the KV pool keeps 800,000,000 - 307,888,128 = 492,111,872 bytes =
    # 7,509 tokens of 65,536. 2 // 3 = 0 running requests: SGLang stops (before round 94 kv said it starts).
    spec = llm.describe(model=Q38)
    ev = SG.evaluate(spec, 32768, "bf16", 18_044_169_011, 20 * GiB, 1, 0.9)
    assert ev["mamba_slots"] == 2 and ev["mamba_pool"] == 307_888_128
    assert ev["tokens"] == 492_111_872 // 65_536 == 7_509
    assert ev["mamba_reqs"] == 0
    assert ev["fits"] is False
    # 1 GiB more weights room: rest 1,873,741,824.2 -> 1,873,741,824.2 x 0.9 / 1.9 = 887,562,443 -> 5 states
    # (769,720,320 bytes), 5 // 3 = 1 request: it starts, with 16,846 tokens ((1,873,741,824 - 769,720,320) // 65,536)
    ev = SG.evaluate(spec, 32768, "bf16", 18_044_169_011 - GiB, 20 * GiB, 1, 0.9)
    assert ev["mamba_slots"] == 5 and ev["mamba_reqs"] == 1 and ev["fits"] is True
    assert ev["tokens"] == (1_873_741_824 - 769_720_320) // 65_536 == 16_846


def test_given_state_pool_below_the_ratio_is_refused_with_sglangs_message():
    # --max-mamba-cache-size 2 on a 24 GiB card at 0.9: the KV pool is large (the given 2 states only take
    # 307,888,128 bytes) but 2 // 3 = 0 requests: refused, with SGLang's own message; 3 states run one request
    spec = llm.describe(model=Q38)
    kw = dict(runtime="sglang", ctx=32768, kv_dtype="bf16", weights_dtype="awq", mem_fraction_static=0.9,
              vram=24 * GiB)
    two = llm.plan(spec, max_mamba_cache_size=2, **kw)
    three = llm.plan(spec, max_mamba_cache_size=3, **kw)
    assert two["kv_capacity_tokens"] > 32768 and two["fits"] is False
    assert any("max_mamba_cache_size=2, mamba_ratio=3, resulting max_num_reqs=0" in n for n in two["notes"])
    assert not any("SGLang starts" in n for n in two["notes"])
    assert three["fits"] is True
    assert any("at most 1 requests at once" in n for n in three["notes"])
