"""kv-accuracy round 52 (task ellm27): LLM batch 59 read after its first sight. Each test fails when its rule is broken
on purpose (the commit says how); expected values are worked here from the log and the model's geometry, not taken
from kv."""
import pytest

from gpu_garden.memory.llm import cache
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _muraiq38(**knobs):
    # Murai-Labs/qwen3.8-27b-rtx5090 bench/results/dflash2-probes/old-recipe.log: vLLM 0.27.1, one RTX 5090, Qwen3.8-27B
    # NVFP4 (compressed-tensors), --max-model-len 32768, fp8 KV, 8 sequences, 0.9, MTP 3; no --enable-prefix-caching
    # among the non-default args, and the engine config prints enable_prefix_caching=False
    return llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "vllm", ctx=32768, kv_dtype="fp8", weights_dtype="nvfp4",
                    vram=31.84 * GiB, gpu_memory_utilization=0.9, max_num_seqs=8, mtp_tokens=3,
                    gpu_name="NVIDIA GeForce RTX 5090", runtime_version="0.27.1", **knobs)


def test_a_hybrid_model_without_prefix_caching_keeps_one_state_page_a_request():
    # The log: 'Setting attention block size to 1600 tokens', 'Add 3 padding layers' (17 attention layers, the MTP
    # layer's included, and 48 DeltaNet layers padded to 51: groups of 17), 'Available KV cache memory: 2.94 GiB',
    # 'GPU KV cache size: 55,606 tokens', 'Maximum concurrency for 32,768 tokens per request: 1.70x'. By hand: 17
    # tensors of 1600 x 2048-byte pages hold 2.94 GiB // (17 x 1600 x 2048) = 56 blocks; a request needs
    # ceil(32768 / 1600) = 21 attention blocks and 1 + 3 state pages (num_speculative_blocks) in each of 3 DeltaNet
    # groups: 33; 56 / 33 x 32768 = 55,606. With prefix caching's "align" page (2 + 3) it is 36 a request: 50,972.
    # Breaking it: runtimes/vllm.py settings' prefix_caching back to True when not given -> state_blocks 2, 50,972.
    blocks = int(2.94 * GiB // (17 * 1600 * 2048))
    assert blocks == 56 and int(blocks / (21 + 3 * (1 + 3)) * 32768) == 55606
    r = _muraiq38()
    args = dict(r["kv_detail"]["pool_args"])
    assert args["state_blocks"] == 1 and args["spec_tokens"] == 3
    args.pop("hybrid"), args.pop("mla_cache")
    pool = cache.vllm_pool(llm.describe(model="Qwen/Qwen3.8-27B"), 2.94 * GiB, "fp8", 32768, **args)
    assert (pool["blocks"], pool["tokens"], round(pool["concurrency"], 2)) == (56, 55606, 1.70)
    assert any("prefix caching off" in n for n in r["notes"])


def test_prefix_caching_given_keeps_the_align_page():
    # --enable-prefix-caching (vLLM's "align" mode for a hybrid model): 2 + 3 pages a state group, 21 + 15 = 36 a
    # request, 56 / 36 x 32768 = 50,972; the printed command carries the flag
    on = _muraiq38(prefix_caching=True)
    args = dict(on["kv_detail"]["pool_args"])
    assert args["state_blocks"] == 2
    args.pop("hybrid"), args.pop("mla_cache")
    pool = cache.vllm_pool(llm.describe(model="Qwen/Qwen3.8-27B"), 2.94 * GiB, "fp8", 32768, **args)
    assert pool["tokens"] == int(56 / 36 * 32768) == 50972
    assert "--enable-prefix-caching" in on["command"]
    assert not any("prefix caching off" in n for n in on["notes"])
    assert "prefix-caching" not in _muraiq38()["command"]


def test_enable_prefix_caching_is_a_vllm_option(capsys):
    # the CLI takes vLLM's own flag pair, the printed command repeats it, and another runtime refuses it
    from support.cli_run import run
    base = ["kv", "--model", "Qwen/Qwen3.8-27B", "--ctx", "32768", "--kv-dtype", "fp8", "--weights-dtype", "nvfp4",
            "--vram", "31.84", "--gpu-memory-utilization", "0.9", "--parallel", "8", "--mtp-tokens", "3",
            "--runtime-version", "0.27.1", "--gpu-name", "NVIDIA GeForce RTX 5090", "--runtime", "vllm", "--json"]
    _, on, _ = run(base + ["--enable-prefix-caching"], capsys)
    _, off, _ = run(base + ["--no-enable-prefix-caching"], capsys)
    _, default, _ = run(base, capsys)
    assert "--enable-prefix-caching" in on["command"] and "--no-enable-prefix-caching" in off["command"]
    assert on["kv_detail"]["pool_args"]["state_blocks"] == 2
    assert off["kv_detail"]["pool_args"]["state_blocks"] == default["kv_detail"]["pool_args"]["state_blocks"] == 1
    rc, _, err = run(["kv", "--model", "Qwen/Qwen2.5-7B-Instruct", "--vram", "24", "--runtime", "llama.cpp",
                      "--enable-prefix-caching"], capsys)
    assert rc == 2 and "llama.cpp does not read --enable-prefix-caching (vLLM)" in err
