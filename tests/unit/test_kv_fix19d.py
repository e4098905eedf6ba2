"""fix19d: the second code review's kv findings (ollama/ollama sources read at the tags named in each test)."""
from support.cli_run import run as _run

Q05 = ["kv", "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--runtime", "ollama"]


# 1. Ollama >= 0.30 passes num_batch to llama-server as -b and -ub (llm/llama_server.go at v0.30.7): --ubatch is read
# there; the older estimate keeps 512 and says so.
def test_ollama_ubatch_is_read_from_030(capsys):
    rc, res, err = _run(Q05 + ["--runtime-version", "0.30.7", "--vram", "8", "--ctx", "8192", "--ubatch", "256",
                               "--json"], capsys)
    assert rc == 0, err
    rc2, auto, _ = _run(Q05 + ["--runtime-version", "0.30.7", "--vram", "8", "--ctx", "8192", "--json"], capsys)
    # 8192 tokens: the scheduler's own batch is 1024; 256 asked gives a compute buffer a quarter of its size or less
    assert res["overhead"]["compute_buffer"] * 3 < auto["overhead"]["compute_buffer"]
    assert {"kind": "param", "name": "num_batch", "value": "256"} in [
        {k: f[k] for k in ("kind", "name", "value")} for f in res["flags"]]
    rc, old, err = _run(Q05 + ["--runtime-version", "0.29.0", "--vram", "8", "--ubatch", "256", "--json"], capsys)
    assert rc == 0 and any(n.startswith("num_batch 256: read for Ollama 0.30 and later") for n in old["notes"])


# 2. One flash decision for llama-server's --flash-attn and the automatic batch (LlamaServerFlashAttention): a card
# ml/device.go refuses gets "--flash-attn off" and automaticGenerationBatch's 512 / 256. At v0.30.0-v0.31.1
# cudaFlashAttentionSupported refuses ComputeMajor < 7 (Pascal included); from v0.31.2 (d4a8991fa) < 6.
def _ollama(ver, card, *extra):
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.units import GiB
    return llm.plan(llm.describe(model="Qwen/Qwen2.5-0.5B-Instruct"), runtime="ollama", ctx=8192, vram=8 * GiB,
                    runtime_version=ver, gpu_name=card, **dict(extra))


def test_ollama_llama_server_flash_off_on_a_refused_card_sets_the_batch():
    from gpu_garden.memory.llm.runtimes import ollama as OL
    from gpu_garden.memory.llm.runtimes import parse_version
    v307, v312 = parse_version("0.30.7", "ollama"), parse_version("0.31.2", "ollama")
    assert not OL.flash_supported(v307, "Tesla P40") and OL.flash_supported(v312, "Tesla P40")
    assert not OL.flash_supported(v312, "Tesla M40") and OL.flash_supported(v307, "RTX 3090")
    p40, a3090 = _ollama("0.30.7", "Tesla P40"), _ollama("0.30.7", "RTX 3090")
    m40_new, p40_new = _ollama("0.31.2", "Tesla M40"), _ollama("0.31.2", "Tesla P40")
    # 8192 tokens on 8 GiB without flash attention: batch 256, and the score matrix back in the compute buffer; the
    # same card at 0.31.2 runs auto (flash on) with the scheduler's 1024: the 3090's buffer
    # Qwen2.5-0.5B (config.json: hidden 896, intermediate 4864, 14 heads, vocab 151936). Flash off, -ub 256: the score
    # matrix, 4 x 256 x (1 + 4 x 896 + 8192 x (1 + 14)) = 129,500,160 B; flash on, -ub 1024, one row of logits (b9479):
    # the feed-forward's live set (round 59), 4 x 1024 x (3 x 4864 + 896) = 63,438,848, with the mask's f16 cast
    # 2 x 8192 x 1024 = 16,777,216: 80,216,064
    assert p40["overhead"]["compute_buffer"] == 129_500_160 and a3090["overhead"]["compute_buffer"] == 80_216_064
    assert p40_new["overhead"]["compute_buffer"] == a3090["overhead"]["compute_buffer"]
    assert m40_new["overhead"]["compute_buffer"] == p40["overhead"]["compute_buffer"]
    cb = lambda ub: _ollama("0.30.7", "Tesla P40", ("ubatch", ub))["overhead"]["compute_buffer"]  # noqa: E731
    assert p40["overhead"]["compute_buffer"] == cb(256) != cb(1024)  # the batch is the constrained 256
    assert any("passes --flash-attn off" in n for n in p40["notes"])
    assert not any("passes --flash-attn off" in n for n in p40_new["notes"])


# 3. Ollama 0.11.1-0.15.4 raise gpt-oss's num_ctx in scheduleRunner after modelOptions has applied the request's own
# options (server/routes.go at v0.11.1, v0.12.0, v0.15.4: opts.NumCtx = max(opts.NumCtx, 8192)): an asked 2048 runs
# at 8192, unless the total VRAM is under 20 GiB (lowVRAM, from 0.11.4).
def test_ollama_gptoss_floor_raises_an_asked_ctx(capsys):
    base = ["kv", "--model", "gpt-oss-20b", "--runtime", "ollama", "--ctx", "2048", "--json"]
    rc, res, err = _run(base + ["--runtime-version", "0.12.0", "--gpu-name", "RTX 4090"], capsys)
    assert res["ctx"] == 8192, err
    assert any("raises gptoss's asked num_ctx (2048) to at least 8192" in n for n in res["notes"])
    rc, low, _ = _run(base + ["--runtime-version", "0.12.0", "--vram", "16"], capsys)  # under 20 GiB: lowVRAM
    rc, new, _ = _run(base + ["--runtime-version", "0.15.5", "--gpu-name", "RTX 4090"], capsys)  # the tiers instead
    rc, big, _ = _run(base[:-3] + ["--ctx", "16384", "--json", "--runtime-version", "0.12.0", "--gpu-name", "RTX 4090"],
                      capsys)
    assert (low["ctx"], new["ctx"], big["ctx"]) == (2048, 2048, 16384)


# 4. The tiers and the 20 GiB threshold are written once (ollama_ctx.py); the plan's notes and the --ctx help are
# made from the tables: a changed table changes the text.
def test_ollama_tier_text_is_made_from_the_tables(monkeypatch, capsys):
    from gpu_garden.memory.llm import kv as llm, ollama_ctx as OC
    from gpu_garden.memory.units import GiB
    assert OC.tiers_text() == "4096 under 23 GiB, 32768 under 47 GiB, else 262144"
    assert OC.tiers_help() == "4096 / 32768 from 23 GiB / 262144 from 47 GiB"
    _, out, _ = _run(["kv", "--help"], capsys)  # argparse wraps the help: compare it unwrapped
    assert "(4096 / 32768 from 23 GiB / 262144 from 47 GiB)" in " ".join(out.split())
    monkeypatch.setattr(OC, "OLLAMA_VRAM_TIERS", ((40 * GiB, 65536), (16 * GiB, 16384), (0, 2048)))
    monkeypatch.setattr(OC, "OLLAMA_LOW_VRAM", ((0, 11, 4), 12 * GiB))
    note = " ".join(llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), runtime="ollama")["notes"])
    assert "(2048 under 16 GiB, 16384 under 40 GiB, else 65536)" in note
    assert OC.tiers_help() == "2048 / 16384 from 16 GiB / 65536 from 40 GiB" and OC.low_vram_text() == "12 GiB"


# 6. GGUF holds F16 / F32 / BF16 files (convert_hf_to_gguf --outtype f16|f32|bf16): --weights-dtype fp16 / fp32 with
# llama.cpp names one of them, not "a type no GGUF file holds"; fp8 still does.
def test_llamacpp_fp16_fp32_are_gguf_types():
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.llm import gguf_repo as GR
    assert (GR.tag_type("fp16"), GR.tag_type("FP32"), GR.tag_type("bfloat16"), GR.tag_type("fp8")) == ("F16", "F32", "BF16", None)
    spec = llm.describe(model="Qwen/Qwen2.5-0.5B-Instruct")
    said = lambda dt: any("no GGUF file holds" in n for n in llm.plan(spec, runtime="llama.cpp", weights_dtype=dt)["notes"])  # noqa: E731
    assert (said("fp16"), said("fp32"), said("bf16"), said("fp8")) == (False, False, False, True)


# 8. Ollama >= 0.30 retries a failed load of the automatic num_ctx once at the next lower tier (server/sched.go
# reduceAutoNumCtxForLoadOOM, nextLowerAutoNumCtx at v0.30.0 / v0.30.7: above 32768 -> 32768, above 4096 -> 4096);
# an asked num_ctx is not retried.
def test_ollama_automatic_ctx_retried_at_the_next_tier():
    from gpu_garden.memory.llm import kv as llm, plan as P
    from gpu_garden.memory.units import GiB
    assert [P.ollama_retry_ctx(c) for c in (131072, 32769, 32768, 4097, 4096)] == [32768, 32768, 4096, 4096, None]
    spec = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    # 1.3 GiB (1.2 before kv-accuracy round 72: at 32768 cells the layers left on the CPU put layer 0's K and V, 144 MiB
    # with its input and Q, in the GPU's compute buffer, runtimes/llamacpp.py cpu_attention_inputs)
    kw = dict(runtime="ollama", runtime_version="0.30.7", gpu_name="H100 80GB", vram=1.3 * GiB)
    res = llm.plan(spec, **kw)  # the H100's tier 262144, capped at 131072: does not fit 1.3 GiB; 32768 does
    assert (res["ctx"], res["fits"], res["ollama_oom_retry"]) == (32768, True, {"from": 131072, "to": 32768})
    assert any("retries the load once at the next lower automatic tier, 32768" in n for n in res["notes"])
    asked = llm.plan(spec, ctx=131072, **kw)
    assert (asked["ctx"], asked["fits"], "ollama_oom_retry" in asked) == (131072, False, False)
    older = llm.plan(spec, **dict(kw, runtime_version="0.29.0"))
    assert "ollama_oom_retry" not in older


# 10. SGLang's hybrid sliding-window pools: "KV, one request" is ctx x (full + 0.8 x sliding) bytes, the pools' price
# of ctx tokens (set_num_tokens_hybrid_swa), not a request's own need; SGLang's SWA eviction is not read in this repo,
# so the figure stays and the output says what it is.
def test_sglang_hybrid_swa_says_what_the_request_row_is():
    from gpu_garden.memory.llm import kv as llm
    from gpu_garden.memory.units import GiB
    res = llm.plan(llm.describe(model="gpt-oss-20b"), runtime="sglang", ctx=32768, vram=24 * GiB)
    note = next(n for n in res["notes"] if n.startswith("'KV, one request' here is"))
    assert "0.8 x sliding layers" in note and "128-token window" in note and "was not read" in note
    dense = llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), runtime="sglang", ctx=32768, vram=24 * GiB)
    assert not any("'KV, one request' here is" in n for n in dense["notes"])


# 5. plan.py and runtimes/ollama.py split by concern, bodies moved verbatim: the context rules in runtime_ctx.py, the
# Ollama >= 0.30 llama-server path in runtimes/ollama_server.py; the old names still reach the same objects.
def test_split_modules_keep_their_names():
    from pathlib import Path
    from gpu_garden.memory.llm import plan as P, runtime_ctx as RC
    from gpu_garden.memory.llm.runtimes import ollama as OL, ollama_server as OS
    assert (P.default_ctx, P.ollama_ctx_floor, P.ollama_retry_ctx) == (RC.default_ctx, RC.ollama_ctx_floor, RC.ollama_retry_ctx)
    assert (OL.generation_batch, OL.evaluate_llama_server, OL.predicted_vram) == (
        OS.generation_batch, OS.evaluate_llama_server, OS.predicted_vram)
    for mod in (OL, OS, RC):
        assert len(Path(mod.__file__).read_text().splitlines()) <= 600, mod.__name__
