"""Task fix16c: review16c findings on `gpu-garden kv`; each expected value from the runtime's source, a config.json's
arithmetic or hand arithmetic, never from the code under test."""
import re

import pytest

from support.cli_run import run as _run

GiB, MiB = 1 << 30, 1 << 20


# R1: from vLLM 0.9.1 (V1) other processes' memory lies outside this process's card, for a fixed --kv-cache-memory
# pool as for a share. Llama-3.1-8B: 8,030,261,248 params x 2 bytes = 16,060,522,496 B of weights, plus vLLM's own
# CUDA context (512 MiB) before any pool.
FIXED = ["kv", "--model", "meta-llama/Llama-3.1-8B-Instruct", "--runtime", "vllm", "--runtime-version", "0.10.1",
         "--vram", "20", "--kv-cache-memory", "6", "--ctx", "8192", "--gpu-memory-utilization", "0.5"]


def test_fixed_pool_is_judged_against_the_free_memory(capsys):
    rc, out, _ = _run(FIXED + ["--free-gib", "14"], capsys)  # 14 GiB < the weights' 14.96 GiB: nothing fits
    assert rc == 1 and "does NOT fit" in out
    rc, out, _ = _run(FIXED + ["--free-gib", "18"], capsys)
    pool = int(re.search(r"--kv-cache-memory (\d+)", out).group(1))
    # fails with the card's 20 GiB (the pool was 4,242,538,496 B)
    assert 0 < pool <= 18 * GiB - 16_060_522_496 - 512 * MiB


# R6: vLLM's ModelConfig._get_and_verify_max_len raises "User-specified max_model_len ... is greater than the derived
# max_model_len" whatever the card; Qwen2.5-7B's config.json: max_position_embeddings 32768, no rope_scaling.
def test_refused_context_without_vram(capsys):
    argv = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--ctx", "131072"]
    rc, out, _ = _run(argv, capsys)
    cmd = next(l for l in out.splitlines() if "vllm serve" in l)
    assert rc == 1 and "--max-model-len 32768 " in cmd
    rc, res, _ = _run(argv + ["--json"], capsys)
    assert rc == 1 and "131072" in res["refused"] and "--max-model-len 32768" in res["command"]
    rc, res, _ = _run(["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--ctx", "32768", "--json"], capsys)
    assert rc == 0 and "refused" not in res  # at the limit: accepted


# R9: SGLang's launch_server takes --quantization from server_args.QUANTIZATION_CHOICES, which at sgl-project/sglang
# 001067ff lists awq, fp8, mxfp8, gptq, ... humming and no experts_int8: a plan sized for int8 experts has no command
# SGLang would run (it would load the 16-bit experts), so it is refused as for llama.cpp and Ollama.
def test_sglang_refuses_experts_int8(capsys):
    rc, _, err = _run(["kv", "--model", "Qwen/Qwen3-30B-A3B", "--runtime", "sglang", "--weights-dtype", "experts_int8",
                       "--ctx", "8192", "--vram", "48"], capsys)
    assert rc == 2 and "SGLang's --quantization has no experts_int8" in err


# R3: before b5913 (ggml-org/llama.cpp#14363, "version: 5913 (225e7a14)") llama-server's one cache gave each slot
# n_ctx_slot = n_ctx / n_parallel (server.cpp init()); from it a unified cache (-kvu) lets any slot use all of -c in
# llama_context (the library), in llama-server only from b6925 (#16736; fix66e item 2: the server kept -c / -np).
# Qwen2.5-7B: max_position_embeddings 32768; -c 65536 -np 4 is 16384 a slot on an old build.
def test_old_llamacpp_slots_hold_a_share_of_the_context():
    from gpu_garden.memory.llm import kv as llm
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    common = dict(runtime="llama.cpp", ctx=65536, parallel=4, weights_dtype="Q4_K_M", vram=24 * GiB)
    old = " | ".join(llm.plan(spec, **common, runtime_version="b5000")["notes"])
    assert "above the model's trained context" not in old and "each slot at most 16384 tokens" in old
    assert "any slot may use it all" not in old
    new = " | ".join(llm.plan(spec, **common, runtime_version="b5913", kv_unified=True,
                              llamacpp_entrypoint="library")["notes"])
    assert "65536 tokens a slot is above the model's trained context (32,768)" in new
    assert "any slot may use it all" in new
    srv = " | ".join(llm.plan(spec, **common, runtime_version="b5913", kv_unified=True)["notes"])
    assert "each slot at most 16384 tokens" in srv and "any slot may use it all" not in srv


# R7: transformers v5 writes the rope scaling as rope_parameters (flat, or nested by layer type); vLLM derives the
# length from it as from rope_scaling (YaRN: original_max_position_embeddings x factor = 32768 x 4).
def test_vllm_max_len_reads_rope_parameters():
    from gpu_garden.memory.llm.spec import vllm_max_len
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768, "rope_theta": 1e6}
    assert vllm_max_len({"max_position_embeddings": 32768, "rope_parameters": yarn}) == 131072
    assert vllm_max_len({"max_position_embeddings": 32768, "rope_parameters": {
        "full_attention": yarn, "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}) == 131072
    # Gemma 4's nested set has no factor: the length stays max_position_embeddings; llama3 tables are not multiplied
    assert vllm_max_len({"max_position_embeddings": 262144, "model_type": "gemma4_text", "rope_parameters": {
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1e6},
        "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}}) == 262144
    assert vllm_max_len({"max_position_embeddings": 131072,
                         "rope_parameters": {"rope_type": "llama3", "factor": 8.0, "rope_theta": 5e5}}) == 131072


# R4: llama-server takes -fa on|off|auto from b6325 (ggml-org/llama.cpp#15434); an older build stops at its argument
# parser on "-fa on", so the OOM advice gates it as the plan's command does.
def test_oom_advice_fa_by_build():
    from gpu_garden.memory.llm.advise import suggest_flags_from_log
    log = {"n_ctx": 32768, "type_k": "f16", "kv_buffer": 4 << 30, "free": 2 << 30}
    fa = lambda flags: next(f for f in flags if f["name"] == "-fa")  # noqa: E731
    assert fa(suggest_flags_from_log(dict(log, build=4000), "llama.cpp"))["text"] == "-fa"
    assert fa(suggest_flags_from_log(dict(log, build=6325), "llama.cpp"))["text"] == "-fa on"
    unknown = fa(suggest_flags_from_log(log, "llama.cpp"))
    assert unknown["text"] == "-fa on" and "bare -fa before b6325" in unknown["reason"]


# R2: a fixed pool that does not fit: vLLM OOMs allocating the asked 6 GiB and prints no "GPU KV cache size" line for
# it (gpu_worker allocates kv_cache_memory_bytes as given). kv55: the user's pool is not lowered in a command; the
# reason names the largest that fits
def test_lowered_pool_prints_no_line_for_the_refused_pool(capsys):
    rc, res, _ = _run(FIXED + ["--free-gib", "18", "--json"], capsys)
    pool = re.search(r"\(--kv-cache-memory (\d+)\)", res["no_fit_reason"]).group(1)
    assert int(pool) < 6 * GiB and "vllm_would_print" not in res and res["command"] == ""


# R11: options another runtime reads are refused with the runtime that reads them, before any range check.
@pytest.mark.parametrize("extra, words", [
    (["--free-gib", "10", "--runtime", "llama.cpp"], "llama.cpp does not read --free-gib (vLLM, SGLang): drop it"),
    (["--quant-skip", "lm_head", "--language-model-only", "--runtime", "ollama"],
     "Ollama does not read --language-model-only (vLLM), --quant-skip (vLLM, SGLang): drop them"),
    (["--pp-layer-partition", "14,14", "--runtime", "llama.cpp"], "--pp-layer-partition is modelled for vLLM only"),
])
def test_options_of_another_runtime_are_refused(capsys, extra, words):
    rc, _, err = _run(["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--vram", "24"] + extra, capsys)
    assert rc == 2 and words in err
