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
