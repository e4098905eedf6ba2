"""fix19e: two kv defects fix19d found (ollama/ollama sources read at the tags named in each test)."""
import pytest


# 1. Ollama refuses flash attention by compute capability (ml/device.go cudaFlashAttentionSupported: major below 7 at
# v0.30.0-v0.31.1, below 6 from v0.31.2 (d4a8991fa), and 7.2). The names are the ones nvidia-smi prints: the Pascal
# Titans (6.1) are not GM200's GTX TITAN X (5.2), which the old name pattern "titan x\b(?!p)" took them for.
@pytest.mark.parametrize("gpu, cc, at_0307, at_0312", [
    ("NVIDIA TITAN X (Pascal)", (6, 1), False, True),
    ("NVIDIA TITAN Xp", (6, 1), False, True),
    ("GeForce GTX TITAN X", (5, 2), False, False),
    ("Tesla P40", (6, 1), False, True),
    ("NVIDIA Jetson AGX Xavier", (7, 2), False, False),
    ("NVIDIA GeForce RTX 3090", (8, 6), True, True),     # (fixT: an Ampere row for vLLM's Marlin FP8 rule)
    ("NVIDIA GeForce RTX 4090", None, True, True),       # a card the table lacks: taken as one that supports it
])
def test_ollama_flash_by_compute_capability(gpu, cc, at_0307, at_0312):
    from gpu_garden.memory.llm import cards
    from gpu_garden.memory.llm.runtimes import ollama as OL
    from gpu_garden.memory.llm.runtimes import parse_version
    assert cards.compute_capability(gpu) == cc
    assert OL.flash_supported(parse_version("0.30.7", "ollama"), gpu) is at_0307
    assert OL.flash_supported(parse_version("0.31.2", "ollama"), gpu) is at_0312


def test_ollama_pascal_titan_runs_flash_on_0312_where_gm200_does_not():
    # at 0.31.2 a supported card runs llama-server's auto flash attention with the scheduler's batch (the 3090's
    # compute buffer); a refused one gets --flash-attn off, the score matrix back and the constrained batch
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.units import GiB

    def cb(card):
        r = llm.plan(llm.describe(model="Qwen/Qwen2.5-0.5B-Instruct"), runtime="ollama", ctx=8192, vram=8 * GiB,
                     runtime_version="0.31.2", gpu_name=card)
        return r["overhead"]["compute_buffer"], any("passes --flash-attn off" in n for n in r["notes"])
    ref, _ = cb("NVIDIA GeForce RTX 3090")
    assert cb("NVIDIA TITAN X (Pascal)") == (ref, False)
    gm200, off = cb("GeForce GTX TITAN X")
    # Qwen2.5-0.5B: the score matrix at -ub 256 (test_kv_fix19d), 129,500,160 B, against flash's 80,216,064
    assert off and gm200 == 129_500_160 and ref == 80_216_064


# 2. "OLLAMA_FLASH_ATTENTION=1 shrinks it" on the compute-buffer line only where flash attention is off and the card
# (and model) take it: gpt-oss from 0.11.8 runs it by itself on Ollama's own engine (fs/ggml GGML.FlashAttention at
# v0.11.8), gptoss's SupportsFlashAttention is false through 0.11.4, and a Tesla M40 (5.2) is refused at 0.31.2.
@pytest.mark.parametrize("model, ver, card, extra, hint", [
    ("gpt-oss-20b", "0.12.0", "NVIDIA GeForce RTX 4090", [], False),               # on by itself
    ("gpt-oss-20b", "0.12.0", "NVIDIA GeForce RTX 4090", ["--flash-attn", "off"], True),
    ("gpt-oss-20b", "0.10.0", "NVIDIA GeForce RTX 4090", [], False),               # the model refuses it
    ("Qwen/Qwen3-8B", "0.31.2", "NVIDIA GeForce RTX 4090", [], False),             # llama-server's auto: on
    ("Qwen/Qwen3-8B", "0.31.2", "NVIDIA GeForce RTX 4090", ["--flash-attn", "off"], True),
    ("Qwen/Qwen3-8B", "0.31.2", "Tesla M40", [], False),                           # the card is refused
])
def test_ollama_flash_hint_only_where_it_is_off_and_taken(capsys, model, ver, card, extra, hint):
    from support.cli_run import run
    rc, out, err = run(["kv", "--model", model, "--runtime", "ollama", "--runtime-version", ver, "--gpu-name", card,
                        "--ctx", "32768", *extra], capsys)
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("compute buffer"))
    assert ("OLLAMA_FLASH_ATTENTION=1 shrinks it" in line) is hint, line
