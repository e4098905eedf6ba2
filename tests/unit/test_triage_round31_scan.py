"""Triage round 31's scan patch (proposed in round 31, applied in round 32): SGLang's CUDA-graph capture
line and llama.cpp's old `main -m model.gguf` command line as context of a bare CUDA error. Lines written from SGLang's
model_runner/eagle_worker log calls and llama.cpp's README usage, not copies of corpus cases."""
import pytest

from support.triage_event import top


@pytest.mark.parametrize("line", [
    "[2026-03-02 10:00:01 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=9.81 GB",
    "[2026-03-02 10:00:01 TP0] Capture draft cuda graph begin. This can take up to several minutes. avail mem=3.02 GB",
    "Capture target prefill CUDA graph begin. backend=breakable, avail mem=6.40 GB",
])
def test_sglang_capture_begin_then_a_bare_cuda_error_is_graph_capture(line):
    text = ("[2026-03-02 10:00:00 TP0] Memory pool end. avail mem=10.20 GB\n" + line + "\n"
            "torch.AcceleratorError: CUDA error: out of memory\n")
    cause, conf, _ = top(text)
    assert cause == "graph-capture", (cause, conf)


def test_sglang_capture_end_words_alone_do_not_set_capture():
    text = ("[2026-03-02 10:00:00 TP0] Memory pool end. avail mem=10.20 GB\n"
            "torch.AcceleratorError: CUDA error: out of memory\n")
    assert top(text)[0] != "graph-capture"


@pytest.mark.parametrize("cmd, runtime", [
    ("$ ./main -m models/7B/ggml-model-q4_0.gguf -n 128 -ngl 32 -p 'hello'", "llama.cpp"),
    ("C:\\llama>main.exe -m D:\\models\\mistral-7b.Q4_K_M.gguf -ngl 33", "llama.cpp"),
    ("$ ./llama-cli -m qwen2-7b-q5_k_m.gguf -c 4096 -ngl 99", "llama.cpp"),
    ("$ python main -m notes.txt", "pytorch"),             # not a GGUF model
    ("$ ./domain -m model.gguf", "pytorch"),               # another program whose name ends in "main"
])
def test_llama_cpp_command_line_names_the_runtime_of_a_bare_cuda_error(cmd, runtime):
    _, _, ev = top(cmd + "\nCUDA error: out of memory\n")
    assert ev["runtime"] == runtime, ev["runtime"]
