"""Review rev53: fixV's GGML_KV_INIT reads "kv_cache_init() failed for self-attention cache", but the words were in
ERROR_KEYS/ERROR_WORDS only, not in the scanner's ANCHORS: in a log's head (any short paste) the line was never
decoded unless another anchor ("whisper_init...") shared it. 2023 llama.cpp printed it after its own prefix."""
from gpu_garden.memory.triage.engine import triage_text


def test_llamacpp_2023_kv_init_line_alone_is_a_kv_cache_failure():
    r = triage_text("llama_new_context_with_model: kv_cache_init() failed for self-attention cache\n")
    assert r["found"] and r["cause"] == "kv-cache"
    assert r["events"][0]["kind"] == "ggml.kv_cache" and r["events"][0]["runtime"] == "llama.cpp"


def test_bare_cross_attention_line_in_a_short_paste_is_found():
    r = triage_text("main: loading model\nkv_cache_init() failed for cross-attention cache\nmain: done\n")
    assert r["found"] and r["cause"] == "kv-cache"
