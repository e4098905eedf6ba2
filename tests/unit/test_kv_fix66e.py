"""Task fix66e: review rev66a's `gpu-garden kv` findings on llama.cpp's slots (issue 15), each expected value from
llama.cpp's source or the model's config.json (Qwen2.5-7B-Instruct: max_position_embeddings 32768, no rope_scaling;
Llama-3.1-8B-Instruct: 32 layers)."""
from support.cli_run import flat, run as _run

QWEN_LC = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M"]
LLAMA_LC = ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--weights-dtype", "Q4_K_M", "--ctx", "65536"]


# item 4 (rev66a R11): --ngl 0 kept the largest-context line unlabelled (0 read as no count)

def test_largest_context_at_ngl_0_says_as_asked(capsys):
    _, text, _ = _run(LLAMA_LC + ["--runtime", "llama.cpp", "--vram", "6", "--ngl", "0"], capsys)
    assert "largest context (-c) at -ngl 0 as asked: " in text
    _, r, _ = _run(LLAMA_LC + ["--runtime", "llama.cpp", "--vram", "6", "--ngl", "0", "--json"], capsys)
    assert r["ngl_as_asked"] is True and r["gpu_layers_used"] == 0


def test_ollama_num_gpu_0_says_as_asked_too(capsys):
    _, text, _ = _run(LLAMA_LC + ["--runtime", "ollama", "--vram", "6", "--ngl", "0"], capsys)
    assert "largest context (num_ctx) at num_gpu 0 as asked: " in text
