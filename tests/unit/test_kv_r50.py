"""kv-accuracy round 50 (task ellm25): LLM batch 57 read after its first sight. Each test fails when its rule is broken
on purpose (the commit says how); expected values are worked here from the logs' printed figures and the models'
geometry, not taken from kv."""
from support.pack import load_benchmark

GiB, MiB = 1 << 30, 1 << 20


def _t4(fit, started, notes):
    # ghghang2/my-repo llama_server.log (b7772): unsloth gpt-oss-20b F16 (MXFP4 experts), -c 32768, -ngl 999, -fa 1,
    # -b 4096 -ub 2048, on a T4 with 14807 MiB free: 'projected to use 14452 MiB of device memory vs. 14807 MiB of free
    # device memory', 'cannot meet free memory target of 1024 MiB', then the abort on the user's -ngl; 'offloaded 25/25
    # layers to GPU' and 'server is listening'
    return {"id": "t", "url": "u", "runtime": "llama.cpp", "version": "b7772", "vram_gib": 14.46,
            "vram_reading": "llamacpp_free",
            "input": {"model": "openai/gpt-oss-20b", "weights_dtype": "F16", "ctx": 32768, "parallel": 1,
                      "kv_unified": False, "kv_dtype": "f16", "flash_attn": "on", "ubatch": 2048, "ngl": 999},
            "measured": {"fit": fit, "started": started, "layers_on_gpu": 25, "layers_model": 25},
            "notes": list(notes), "inferred": {}}


ABORT = ("'failed to fit params to free device memory: n_gpu_layers already set by user to 999, abort'",)


def test_a_fit_step_aborted_on_a_users_ngl_is_scored_on_started():
    # common/fit.cpp throws "n_gpu_layers already set by user to N, abort" before it places a layer, and
    # common_init_result ignores the fit status and loads the model with the user's parameters: the row's "fit" (false:
    # 14452 + 1024 > 14807) is the fit step's margin, every layer went to the GPU and the server started. By hand the
    # plan at -ngl 999 fits (14452 MiB projected < 14807 MiB free), so the verdict agrees with "started".
    # Breaking it: fit_aborted_on_ngl out of score()'s llama.cpp branch -> scored against "fit", (True, False).
    b = load_benchmark("bench_llm")
    s = b.score(_t4(False, True, ABORT))
    assert s["fits"] == (True, True) and s["fits_agree"] and "fits_whole" not in s
    # the same row without the abort quoted keeps the old comparison (every layer on the GPU against "fit")
    s = b.score(_t4(False, True, ()))
    assert s["fits"] == (True, False)
    assert b.fit_aborted_on_ngl(_t4(False, True, ABORT))
    assert not b.fit_aborted_on_ngl(dict(_t4(False, True, ABORT), input={"model": "m", "ctx": 1}))


# ---------------------------------------------------------------- Ollama's tinyllama tag (TinyLlama-1.1B built in since batch 43)
def test_ollama_tinyllama_tag_is_the_built_in_at_q4_0():
    # PandiaJason/nanos ollama.log (Ollama 0.24.0, Metal): the blob's GGUF metadata (general.name TinyLlama, 22 blocks,
    # n_embd 2048, n_ff 5632, 32 heads, 4 KV heads, context 2048, 32000 tokens, 201 tensors: output.weight of its own)
    # and 'file type = Q4_0'. Params by hand: 22 x (2048 x (2048 + 2 x 256 + 2048) + 3 x 2048 x 5632 + 2 x 2048)
    # + 2 x 32000 x 2048 + 2048 = 1,100,048,384 ('model params = 1.10 B'); KV: 22 x 4 x 64 x 2 (K, V) x 2 B x 2048
    # cells = 44 MiB ('Metal KV buffer size = 44.00 MiB'). Breaking it: tinyllama out of OLLAMA_LIBRARY -> unknown
    # model; out of OLLAMA_Q4_0_LIBRARIES -> the Q4_K_M default.
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm.ollama_tags import ollama_tag
    s = llm.describe(model="tinyllama:1.1b")
    assert (s.name, s.n_layers, s.n_kv_heads, s.vocab, s.max_ctx, s.tied) == ("TinyLlama-1.1B", 22, 4, 32000, 2048, False)
    assert s.params == 22 * (2048 * (2048 + 2 * 256 + 2048) + 3 * 2048 * 5632 + 2 * 2048) + 2 * 32000 * 2048 + 2048
    built, quant, _ = ollama_tag("tinyllama:1.1b")
    assert (built, quant) == ("TinyLlama-1.1B", "Q4_0") and ollama_tag("tinyllama")[:2] == ("TinyLlama-1.1B", "Q4_0")
    r = llm.plan(s, "ollama", ctx=2048, runtime_version="0.24.0")
    assert r["kv_total"] == 22 * 4 * 64 * 2 * 2 * 2048 == 44 * MiB


# ---------------------------------------------------------------- a development build of a release not yet made
def test_a_dev_build_reads_before_its_release():
    # PEP 440 orders X.Y.Z.devN before X.Y.Z (and before its candidates); setuptools-scm writes a checkout past tag
    # X.Y.(Z-1) so. jethac/dgx-spark-hijinks aeon_qwen36_dflash_nothink server.log prints 'v0.20.1.dev0+g101584af0
    # .d20260424' and the pre-0.20.1 token figure: 'GPU KV cache size: 582,832 tokens' next to 4.71x at 262,144, i.e.
    # 3496 blocks // 7 groups x 1168 (test_kv_ellm24.py works the pool), not 4.71 x 262,144 = 1,234,698.
    # Breaking it: the _DEV branch out of parse_version -> (0, 20, 1), the release's concurrency figure.
    from gpu_garden.memory.llm.runtimes import PRE, at_least, parse_version
    v = parse_version("0.20.1.dev0+g101584af0.d20260424", "vllm")
    assert v == (0, 20, 0, PRE, -1) and not at_least(v, 0, 20, 1) and at_least(v, 0, 20, 0)
    assert parse_version("0.20.1.dev0", "vllm") < parse_version("0.20.1rc1.dev16", "vllm") < parse_version("0.20.1")
    assert parse_version("0.1.dev19754+g3a0914114", "vllm") is None  # an untagged checkout stays a commit


# ---------------------------------------------------------------- a drafter's config.json stored with the data
def test_a_rows_drafter_path_is_read_from_the_repo(tmp_path, monkeypatch):
    # jethac/dgx-spark-hijinks aeon_qwen36_dflash_nothink server.log (vLLM 0.20.1.dev0, GB10): Qwen3.6-35B-A3B NVFP4 with
    # z-lab/Qwen3.6-35B-A3B-DFlash, 15 speculative tokens, 262,144, 65,536 batched tokens. The drafter's fields are in
    # benchmarks/data/drafters/Qwen3.6-35B-A3B-DFlash (its README names the source). From the printed 62.31 GiB: 8
    # tensors of 1168 x 2048-byte pages give 3496 blocks, // 7 groups x 1168 = 582,832 tokens, as printed. Its weights:
    # 8 x (2 x 2048 x 4096 + 2 x 2048 x 512 + 3 x 2048 x 6144) + 5 x 2048 x 2048 values in bf16 = 904 MiB.
    # Breaking it: bench's _plan without the repo-relative drafter path -> the config is not found from another cwd.
    b = load_benchmark("bench_llm")
    assert int(62.31 * GiB // (8 * 1168 * 2048)) == 3496 and 3496 // 7 * 1168 == 582832
    row = {"id": "t", "url": "u", "runtime": "vllm", "version": "0.20.1.dev0+g101584af0", "vram_gib": 121.63,
           "input": {"model": "Qwen/Qwen3.6-35B-A3B", "weights_dtype": "nvfp4", "ctx": 262144,
                     "gpu_memory_utilization": 0.85, "max_num_seqs": 128, "max_num_batched_tokens": 65536,
                     "speculative_config": {"method": "dflash", "model": "benchmarks/data/drafters/Qwen3.6-35B-A3B-DFlash",
                                            "num_speculative_tokens": 15}, "gpu_name": "NVIDIA GB10"},
           "measured": {"kv_available_gib": 62.31, "kv_tokens": 582832}, "notes": [], "inferred": {}}
    monkeypatch.chdir(tmp_path)
    s = b.score(row)
    assert s["tokens_from_printed"] == (582832, 582832) and s["tokens_from_printed_exact"]
    _, res = b._plan(row)
    drafter = 8 * (2 * 2048 * 4096 + 2 * 2048 * 512 + 3 * 2048 * 6144) + 5 * 2048 * 2048
    assert drafter * 2 == 904 * MiB and any("904.00 MiB" in n for n in res["notes"])
