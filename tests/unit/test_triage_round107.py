"""Triage round 107 (batches 558-561): MLX's metal::malloc refusal quoted without its cap clause, whisper.cpp's programs
by name, and ggml-metal refusing a buffer of a few MiB with nothing loaded before it (R17). Inputs are written by hand
from the runtimes' own message forms; each change has a control that keeps its old reading."""

import pytest

from support.triage_event import read, top
from gpu_garden.memory.triage.other_patterns import MLX_MALLOC
from gpu_garden.memory.triage.runtime_markers import RUNTIME_MARKERS
from support.regex_time import cpu_limit, cpu_now

MB = 1 << 20


# --- MLX: "[metal::malloc] Attempting to allocate N bytes" ending the quote ------------------------------------------------

def test_mlx_malloc_quoted_without_its_cap_clause_is_read():
    # a wrapped size (2^64 less a page) from an unsigned underflow: R12, other
    text = "Traceback (most recent call last):\nRuntimeError: [metal::malloc] Attempting to allocate 18446744073709547520 bytes\n"
    cause, kind, runtime, device, nums = read(text)
    assert (cause, kind, runtime, device) == ("other", "mlx.buffer_limit", "mlx", "metal")
    assert nums == {"requested": 18446744073709547520}


def test_mlx_malloc_without_cap_keeps_a_real_size_and_no_limit():
    _, kind, runtime, _, nums = read("RuntimeError: [metal::malloc] Attempting to allocate 6442450944 bytes  \n")
    assert (kind, runtime) == ("mlx.buffer_limit", "mlx") and nums == {"requested": 6442450944}


def test_mlx_malloc_mid_sentence_is_not_the_cut_quote():
    # the words go on after "bytes": not a quote that ends there (and not the cap clause either)
    assert MLX_MALLOC.search("[metal::malloc] Attempting to allocate 4096 bytes for the cache, retrying") is None
    # the full message still reads its limit
    m = MLX_MALLOC.search("[metal::malloc] Attempting to allocate 300 bytes which is greater than the maximum allowed "
                          "buffer size of 200 bytes.")
    assert m and m.group(1) == "300" and m.group(2) == "200"


# --- whisper.cpp's programs by name ---------------------------------------------------------------------------------------

METAL_SMALL = "ggml_metal_buffer_init: error: failed to allocate buffer, size = {size} MiB\n"


@pytest.mark.parametrize("cmd", ["./build/bin/whisper-cli -m models/ggml-base.en.bin -f clip.wav -otxt\n",
                                 "C:\\apps\\whisper\\whisper-cli.exe --model ggml-small.bin audio.wav\n",
                                 "whisper-server --host 127.0.0.1 --port 8080 -m ggml-medium.bin\n"])
def test_whisper_programs_mark_the_runtime(cmd):
    _, _, runtime, device, _ = read(cmd + METAL_SMALL.format(size="3.50"))
    assert (runtime, device) == ("whisper.cpp", "metal")


@pytest.mark.parametrize("cmd", ["./llama-cli -m model.gguf -p hi\n", "python my-whisper-client.py --url http://x\n", ""])
def test_other_programs_do_not_mark_whisper(cmd):
    _, _, runtime, _, _ = read(cmd + METAL_SMALL.format(size="3.50"))
    assert runtime == "llama.cpp"


# --- ggml-metal refusing a few MiB with nothing loaded before it (R17) ---------------------------------------------------

@pytest.mark.parametrize("size", ["0.75", "3.50", "15.90"])
def test_tiny_metal_buffer_with_nothing_loaded_is_other(size):
    cause, conf, ev = top(METAL_SMALL.format(size=size))
    assert cause == "other" and ev["kind"] == "ggml.buffer", conf


def test_a_large_metal_buffer_keeps_its_old_reading():
    cause, conf, _ = top(METAL_SMALL.format(size="512.00"))
    assert cause == "weights-exceed-vram", conf


def test_a_tiny_metal_buffer_after_model_buffers_keeps_its_old_reading():
    text = ("load_tensors: offloaded 33/33 layers to GPU\n"
            "load_tensors:   Metal_Mapped model buffer size = 21000.00 MiB\n" + METAL_SMALL.format(size="3.50"))
    cause, conf, _ = top(text)
    assert cause != "other", conf


# --- linear time on 1 MB adversarial strings ------------------------------------------------------------------------------

def _fast(rx, text):
    t = cpu_now()
    rx.search(text)
    assert cpu_now() - t < cpu_limit(1.0)


def test_changed_patterns_are_linear_on_adversarial_lines():
    import re
    whisper = next(re.compile(rx) for rid, words, rx in RUNTIME_MARKERS if "whisper-cli" in words)
    for text in ("[metal::malloc] Attempting to allocate 1 bytes" + " " * MB + "x",
                 "[metal::malloc] Attempting to allocate 1 bytes \t" * (MB // 48),
                 "[metal::malloc] Attempting to allocate " + "9" * MB + " bytes",
                 "[metal::malloc] " * (MB // 16)):
        _fast(MLX_MALLOC, text)
    for text in ("whisper-" * (MB // 8), "whisper-cl" * (MB // 10), "-whisper-cli" * (MB // 12), "a" * MB + "whisper-cli"):
        _fast(whisper, text)


# --- `ollama ps`'s PROCESSOR column names the log Ollama's -----------------------------------------------------------------

PINNED = "ggml_vulkan: Failed to allocate pinned memory (ErrorOutOfDeviceMemory)\n"


@pytest.mark.parametrize("row", ["qwen3:8b    500a1f067a9f    9.8 GB    35%/65% CPU/GPU    32768    4 minutes from now\n",
                                 "mistral-small:24b, 18 GB, 100%/0% CPU/GPU, CONTEXT 8192\n"])
def test_ollama_ps_split_row_names_ollama(row):
    _, _, runtime, device, _ = read(row + PINNED)
    assert (runtime, device) == ("ollama", "vulkan")


@pytest.mark.parametrize("row", ["", "the split was 35% CPU and 65% GPU\n", "load: 5%/95%/ CPU/GPU mix\n",
                                 "usage 135%/65% CPU/GPUs\n"])
def test_other_percent_lines_do_not_name_ollama(row):
    _, _, runtime, _, _ = read(row + PINNED)
    assert runtime == "llama.cpp"


def test_ollama_ps_pattern_is_linear_on_adversarial_lines():
    from gpu_garden.memory.triage.fact_patterns import OLLAMA_PS
    for text in ("1%/" * (MB // 3), "100%/100% CPU/" * (MB // 14), "9" * MB + "%/1% CPU/GPU", "%/1% CPU/GP" * (MB // 11)):
        _fast(OLLAMA_PS, text)
