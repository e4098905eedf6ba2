"""Ollama >= 0.30 (llama-server) over several cards (kvfix13): the scheduler's own prediction and 80 % rule, then
llama.cpp's split. Expected values are hand arithmetic from Ollama's and llama.cpp's source."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import weights as W

GiB = 1 << 30


def test_ollama_030_predicts_as_its_scheduler_does():
    # llm/llama_server.go PredictServerVRAM: file size + 2 x layers x min KV heads x (embedding / max heads) x ctx x 2.
    # qwen3:32b: 64 layers, 8 KV heads, 5120 / 64 = 80 (not the 128 head size), 8192 cells -> 1,342,177,280
    from gpu_garden.memory.llm.runtimes import ollama as O
    s = llm.describe(model="qwen3:32b")
    assert O.predicted_vram(s, {"total": 0}, 8192) == 2 * 64 * 8 * 80 * 8192 * 2


def _q32(gpus, vram=16 * GiB, ngl=None):
    s = llm.describe(model="qwen3:32b")
    return llm.plan(s, "ollama", ctx=8192, vram=vram, runtime_version="0.30.0", num_gpus=gpus, ngl=ngl)


def test_ollama_030_spreads_over_the_cards_when_one_is_not_enough():
    # Q4_K_M qwen3:32b + its cache is far over 80 % of a 16 GiB card: selectLlamaServerPlacement hands llama-server
    # both cards. llama.cpp's split (equal shares, 64 layers + output = 65): layer il on card 0 while il/65 < 0.5,
    # so 33 + 31 layers, the output with the last layer on card 1. Before: the second card was dropped and one
    # 16 GiB card judged ("does not fit").
    one, two = _q32(1), _q32(2)
    assert not one["fits_as_requested"]
    assert [(d["layers"], d["output_layer"]) for d in two["devices"]] == [(33, False), (31, True)]
    assert two["fits_as_requested"] and two["per_gpu"]
    assert not _q32(2, ngl=0).get("devices")           # num_gpu 0: -ngl 0, no card used


def test_ollama_030_keeps_one_card_within_80_percent():
    # bestSingleGPUFit: a card whose free memory x 80 / 100 holds the prediction takes the model alone
    from gpu_garden.memory.llm.runtimes import ollama as O
    s = llm.describe(model="qwen3:32b")
    p = O.predicted_vram(s, W.weights_by_role(s), 8192)
    just_in = int(p * 100 / 80) + 2 * 100
    single = _q32(2, vram=just_in)
    assert not single.get("devices") and single["total"] == _q32(1, vram=just_in)["total"]
    assert _q32(2, vram=just_in - 4 * 100).get("devices")   # a few bytes less: both cards
