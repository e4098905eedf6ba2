"""(fixY) batch-560's whisper.cpp case read runtime llama.cpp: its log names the program only as the Rust binary cargo builds
("--bin transcription_benchmark_whisper", whisper.cpp through whisper-rs), then ggml's Metal refusal, whose kind defaults to
llama.cpp. A cargo --bin name holding "whisper" is now a whisper.cpp marker (runtime_markers.py, beside round 107's
whisper-cli / whisper-server); a path such as batch-76's "whisper-src\\ggml\\src" (labelled llama.cpp) is not one."""
import re
from pathlib import Path

import pytest

from gpu_garden.memory.triage.runtime_markers import RUNTIME_MARKERS
from support.regex_time import cpu_limit, cpu_now
from support.triage_event import last_event
from support.unseen_corpus import load

UNSEEN = Path(__file__).parent / "corpus" / "unseen"
OBI = UNSEEN / "batch-560" / "whispercpp_metal_openbroadcastintercom_large_v3_turbo_codex_sandbox_7_33mib_buffer_refused_outside_sandbox_runs.log"
SONA = next((UNSEEN / "batch-76").glob("llamacpp_whisper_vulkan_vibe_sona_*.log"))
METAL = "ggml_metal_buffer_init: error: failed to allocate buffer, size = 7.33 MiB\n"
BIN_RX = next(re.compile(rx) for rt, words, rx in RUNTIME_MARKERS if words == ("--bin",))
MB = 1 << 20


def test_batch_560s_cargo_binary_names_whisper_cpp():
    body, expect, _, _ = load(OBI)
    assert "--bin transcription_benchmark_whisper" in body and expect["runtime"] == "whisper.cpp"
    res, ev = last_event(body)
    assert (res["cause"], ev["runtime"], ev["device_kind"]) == ("other", "whisper.cpp", "metal"), ev


@pytest.mark.parametrize("cmd", ["cargo run --release --bin whisper_stream\n", "cargo build --bin=my-whisper-app\n",
                                 "cargo run --bin Whisper\n"])
def test_a_cargo_binary_named_whisper_is_whisper_cpps(cmd):
    assert last_event(cmd + METAL)[1]["runtime"] == "whisper.cpp"


@pytest.mark.parametrize("cmd", ["", "cargo run --release --bin llama_bench\n", "cargo run --bin server -- --model whisper.bin\n",
                                 "python transcribe_whisper.py --model ggml-large-v3.bin\n"])
def test_ggml_without_a_whisper_binary_stays_llama_cpp(cmd):
    # (the third: the binary is "server"; "whisper" is an argument's, not cargo's --bin name)
    assert last_event(cmd + METAL)[1]["runtime"] == "llama.cpp"


def test_batch_76s_whisper_source_path_keeps_its_llama_cpp_label():
    body, expect, _, _ = load(SONA)
    assert "whisper-src" in body and expect["runtime"] == "llama.cpp"
    assert last_event(body)[1]["runtime"] == "llama.cpp"


def test_the_bin_marker_is_linear_on_adversarial_lines():
    for text in ("--bin " * (MB // 6), "--bin " + "a" * MB, "--bin=" + "a-" * (MB // 2), ("--bin " + "x" * 79 + "Whispe") * (MB // 92),
                 "--bin " + "." * MB + "whisper"):
        t = cpu_now()
        BIN_RX.search(text)
        assert cpu_now() - t < cpu_limit(1.0), text[:40]
