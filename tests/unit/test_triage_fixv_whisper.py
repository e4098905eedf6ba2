"""(fixV) whisper.cpp's KV cache init failure (src/whisper.cpp whisper_kv_cache_init / whisper_init_state; the older
kv_cache_init spelling): read as whisper.cpp's kv-cache with its own guide, none of llama.cpp's -c/-ngl advice. Inputs
are written by hand from the library's own message forms; the llama.cpp control keeps its reading."""

import pytest

from support.triage_event import last_event

NOW = ("whisper_init_from_file_with_params_no_state: loading model from 'models/ggml-large-v3.bin'\n"
       "whisper_backend_init_gpu: using CUDA0 backend\n"
       "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 84.00 MiB on device 0: cudaMalloc failed: out of memory\n"
       "whisper_kv_cache_init: failed to allocate memory for the kv cache\n"
       "whisper_init_state: whisper_kv_cache_init() failed for self-attention cache\n")
# before the rename (2023): the function was kv_cache_init, its message spelt "KV cache"
OLD = ("whisper_init_from_file_with_params_no_state: loading model from 'models/ggml-medium.bin'\n"
       "kv_cache_init: failed to allocate memory for the KV cache\n"
       "whisper_init_state: kv_cache_init() failed for self-attention cache\n")
# the program named, its library's two lines alone (no allocator line, no other whisper_ line before them)
BARE = ("./build/bin/whisper-cli -m models/ggml-large-v3.bin -f clip.wav\n"
        "whisper_kv_cache_init: failed to allocate memory for the kv cache\n"
        "whisper_init_state: whisper_kv_cache_init() failed for cross-attention cache\n")


@pytest.mark.parametrize("text", [NOW, OLD, BARE], ids=["now", "old", "bare"])
def test_whisper_kv_init_failure_is_whispers_kv_cache(text):
    res, ev = last_event(text)
    assert (res["cause"], ev["runtime"], ev["guide"]["id"]) == ("kv-cache", "whisper.cpp", "whispercpp-kv-cache")
    said = " ".join(c for x in ev["causes"] for c in x["evidence"])
    assert "llama.cpp" not in said and "whisper_kv_cache_init" in said
    cmds = " ".join(c["text"] for c in ev["guide"]["commands"])
    assert "-bs 1" in cmds and "-ngl" not in cmds and " -c " not in cmds


def test_the_bare_quote_names_whisper_by_its_function():
    # the cache function's name alone (a wrapper's quote, no prefix) names the library
    _, ev = last_event("whisper_kv_cache_init() failed for self-attention cache\n")
    assert (ev["runtime"], ev["kind"]) == ("whisper.cpp", "ggml.kv_cache")


def test_llama_cpp_kv_failure_keeps_its_guide():
    res, ev = last_event("llama_context: n_ctx = 131072\n"
                         "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of memory\n"
                         "llama_kv_cache_init: failed to allocate buffer for kv cache\n")
    assert (res["cause"], ev["runtime"], ev["guide"]["id"]) == ("kv-cache", "llama.cpp", "llamacpp-kv-cache")
    assert ev["causes"][0]["evidence"][0].startswith("llama.cpp: failed to allocate buffer for kv cache")
