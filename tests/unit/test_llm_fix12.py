"""Review 12 fixes: each test fails on the code before its fix."""
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _qwen32_cards(ngl):
    s = llm.describe(model="Qwen/Qwen3-32B")
    r = llm.plan(s, "llama.cpp", ctx=40960, weights_dtype="Q5_K_M", vram=23.56 * GiB, ngl=ngl, num_gpus=2,
                 runtime_version="b7800", flash_attn=True)
    return [d["total"] for d in r["devices"]]


def test_fit_keeps_its_target_free_on_each_card_not_the_sum():
    # b7800 has --fit: with no -ngl it keeps 1 GiB free on every card (llama.cpp common/fit: fit_target per
    # device). -ngl 99 puts the same 64 layers + output on the cards with the 2% margin instead:
    # int(0.02 * 23.56 GiB) = 505,947,147 bytes. So each card differs by 1 GiB - 505,947,147, not 2 GiB - that.
    fit, plain = _qwen32_cards(None), _qwen32_cards(99)
    for a, b in zip(fit, plain):
        assert a - b == GiB - 505947147


def _v2_lite_awq(version):
    s = llm.describe(model="deepseek-ai/DeepSeek-V2-Lite")
    return llm.plan(s, "vllm", ctx=4096, weights_dtype="awq", vram=24 * GiB, runtime_version=version)


def test_newest_vllm_keeps_the_mla_kv_b_proj_copy_as_0_26_does():
    # no version is the newest: the 16-bit kv_b_proj copy of every vLLM >= 0.8 is there too. DeepSeek-V2-Lite
    # config.json: kv_lora_rank 512, 16 heads, qk_nope_head_dim 128, v_head_dim 128, 27 layers ->
    # 512 * 16 * (128 + 128) * 2 bytes * 27 = 113,246,208 bytes = 108.00 MiB
    new, pinned = _v2_lite_awq(None), _v2_lite_awq("0.26.0")
    assert new["weights"] == pinned["weights"]
    assert "108.00 MiB of kv_b_proj" in new["weights_how"]
