"""Review 14a's defects in `gpu-garden kv` (task llmfix18): each test from vLLM's source or hand arithmetic."""

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version
from support.regex_time import cpu_limit, cpu_now

GiB = 1 << 30


@pytest.mark.parametrize("v", ["0.1.dev19754+g3a0914114.cu129", "0.1.dev19754+g3a0914114.precompiled",
                               "0.1.dev19754+g3a0914114.d20260101.cu128", "0.0.0.dev3+gd91c3682b.rocm641"])
def test_untagged_build_with_local_segments_is_a_commit(v):
    # setuptools-scm's untagged version, then the local segments vLLM's setup.py adds (+cu129 / .precompiled) after a
    # dirty tree's .dYYYYMMDD: a commit, not release 0.1 (the old pattern stopped at .dYYYYMMDD: (0, 1, 0))
    assert parse_version(v, "vllm") is None


def test_untagged_pattern_stays_linear_on_many_segments():
    # 100,000 dot segments and a character no segment takes: a pattern whose segments could swallow dots backtracks
    # without end; this one fails in one pass (refused as no version, quickly)
    v = "0.1.dev1+gabcdef1" + ".a1" * 100000 + "!"
    t = cpu_now()
    with pytest.raises(llm.UserError):
        parse_version(v, "vllm")
    assert cpu_now() - t < cpu_limit(1.0)


# Qwen3.8-27B's pool page (test_llm_ellm17): 784 tokens x 4 KV heads x 256 x (K, V) x 2 bytes = 3,211,264 bytes
PAGE = 784 * 4 * 256 * 2 * 2


@pytest.mark.parametrize("parts, seqs, starts", [([32, 32], 1000, True), ([32, 32], 1001, False),
                                                 ([36, 28], 888, True), ([36, 28], 889, False)])
def test_pipeline_parallel_keeps_the_mamba_block_refusal(parts, seqs, starts):
    # vLLM >= 0.20 refuses max_num_seqs > kv_cache_config.num_blocks (gpu_model_runner _check_and_update_cudagraph_mode);
    # under PP every stage keeps the smallest stage's blocks (get_kv_cache_configs). Layers lllF x 16; vLLM deals each
    # kind to groups of 16 layers (1 full, 3 linear) and a stage's page holds its largest share of one group: 32/32 ->
    # 8 tensors on each stage, 1000 x 8 x PAGE / (8 x PAGE) = 1000 blocks; 36/28 -> 9 and 7 tensors, min(8000 // 9,
    # 8000 // 7) = 888 blocks. The old code took each stage's starts as concurrency >= 1 and lost the refusal
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    r = llm.plan(s, "vllm", ctx=32768, weights_dtype="fp8", vram=94.97 * GiB, kv_cache_memory=1000 * 8 * PAGE,
                 max_num_seqs=seqs, runtime_version="0.20.0", pipeline_parallel_size=2, pp_layer_partition=parts)
    assert r["fits_as_requested"] is starts
    blocks = 1000 if parts == [32, 32] else 888
    assert any(f"exceeds the pool's {blocks} Mamba cache blocks" in n for n in r["notes"]) is not starts


def test_lowered_max_num_seqs_never_exceeds_the_mamba_blocks():
    # 1000 blocks (1000 x 16 x PAGE / (16 x PAGE)) and --parallel 1200 at vLLM's 1024: the printed --max-num-seqs is
    # min(1200, 1000) = 1000, which vLLM takes; the old min-less 1200 was itself refused (1200 > 1000)
    # (vLLM's 1024 as its default, not given: a --max-num-seqs the user gives is printed as given, kv55)
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    r = llm.plan(s, "vllm", ctx=2048, parallel=1200, weights_dtype="fp8", vram=94.97 * GiB,
                 kv_cache_memory=1000 * 16 * PAGE, runtime_version="0.20.0")
    assert r["fits_as_requested"] is False and r["fits"] is True
    assert " --max-num-seqs 1000 " in r["command"]


def test_no_mamba_note_when_the_weights_leave_no_pool():
    # 27B parameters in bf16 are 54 GB: nothing is left of 23.5 GiB for a pool, so no sequence count helps and vLLM's
    # Mamba-block check is never reached; the old note read "exceeds the pool's 0 Mamba cache blocks ... 0 or less"
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    r = llm.plan(s, "vllm", ctx=32768, weights_dtype="bf16", vram=23.5 * GiB, runtime_version="0.20.0")
    assert r["fits"] is False
    assert not any("Mamba cache blocks" in n for n in r["notes"])


@pytest.mark.parametrize("parallel", [1, 4])
def test_the_command_keeps_the_users_max_num_seqs(parallel):
    # --max-num-seqs 1000 on a pool that holds it (1000 blocks, vLLM 0.20 takes max_num_seqs <= num_blocks): the command
    # repeats 1000; the old one printed max(--parallel, 1), turning the user's 1000 into 1 (or 4)
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    r = llm.plan(s, "vllm", ctx=2048, parallel=parallel, weights_dtype="fp8", vram=94.97 * GiB,
                 kv_cache_memory=1000 * 16 * PAGE, max_num_seqs=1000, runtime_version="0.20.0")
    assert r["fits_as_requested"] is True
    assert " --max-num-seqs 1000 " in r["command"]


def test_a_kv_cache_memory_plan_prints_kv_cache_memory():
    # vLLM's CacheConfig.kv_cache_memory_bytes "(when not-None) ignores gpu_memory_utilization": the pool the plan sized
    # is the user's bytes, so the command repeats them (as vLLM's own hint writes it, --kv-cache-memory=N) and prints
    # no share of its own; the old command printed --gpu-memory-utilization 0.90 and dropped the pool
    s = llm.describe(model="Qwen/Qwen3.8-27B")
    r = llm.plan(s, "vllm", ctx=32768, weights_dtype="fp8", vram=94.97 * GiB, kv_cache_memory=1000 * 16 * PAGE,
                 runtime_version="0.20.0", max_num_seqs=1000)
    assert f" --kv-cache-memory {1000 * 16 * PAGE}" in r["command"] + " "
    assert "--gpu-memory-utilization" not in r["command"]
    kept = llm.plan(s, "vllm", ctx=32768, weights_dtype="fp8", vram=94.97 * GiB, kv_cache_memory=1000 * 16 * PAGE,
                    runtime_version="0.20.0", max_num_seqs=1000, gpu_memory_utilization=0.5)
    assert f"--kv-cache-memory {1000 * 16 * PAGE} --gpu-memory-utilization 0.50" in kept["command"]


@pytest.mark.parametrize("version, engine, line", [
    ("0.10.1", "v0", "# CUDA blocks: 1024; Maximum concurrency for 8,192 tokens per request: 2.00x"),
    ("0.6.4", None, "# GPU blocks: 1024; Maximum concurrency for 8,192 tokens per request: 2.00x"),
    ("0.10.1", "v1", "GPU KV cache size: 16,384 tokens; Maximum concurrency for 8,192 tokens per request: 2.00x")])
def test_v0_prints_its_blocks_not_v1s_tokens(version, engine, line):
    # Llama-3.1-8B under PP 2: 16 layers a stage x 8 KV heads x 128 x (K, V) x 2 bytes = 65,536 bytes a token, so 1 GiB
    # holds 16,384 tokens = 1,024 blocks of 16. V0's executor logs "# CUDA blocks: 1024" ("# GPU blocks" in 0.6.x) and
    # 1024 x 16 / 8192 = 2.00x from the whole pool; its per-stage split (1024 // 2 blocks a virtual engine) prints
    # nothing. The old line paired V1's wording with those 8,192 per-engine tokens
    s = llm.describe(model="Llama-3.1-8B")
    r = llm.plan(s, "vllm", ctx=8192, vram=80 * GiB, runtime_version=version, vllm_engine=engine, pipeline_parallel_size=2,
                 kv_cache_memory=GiB, gpu_name="NVIDIA A100-SXM4-80GB")
    assert r["vllm_would_print"] == line


def test_bench_llm_counts_the_verdicts_that_depend_on_the_file():
    # three scored rows (two agree) and one Unsloth UD- row whose verdict depends on the file: fits_agree stays 2/3,
    # the left-out row is counted beside it and named in the printed line (it was dropped without a word)
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_llm.py"
    spec = importlib.util.spec_from_file_location("bench_llm_llmfix18", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = [{"id": "a", "fits_agree": True}, {"id": "b", "fits_agree": True}, {"id": "c", "fits_agree": False},
            {"id": "d", "fits_depends": True}]
    s = bench.summarize(rows)
    assert s["fits_agree"] == "2/3" and s["fits_depends"] == 1
    assert "all 2/3 (1 depend on the file, not scored)" in bench.fits_line({"all": s})


def _free_plan(free_gib, version="0.10.1", **kw):
    s = llm.describe(model="Llama-3.1-8B")
    return llm.plan(s, "vllm", ctx=8192, weights_dtype="awq", vram=15.99 * GiB, runtime_version=version,
                    free_memory=int(free_gib * GiB), **kw)


def test_free_memory_refuses_the_default_share_and_plans_the_largest_it_takes():
    # vLLM V1 init_device: total x gpu_memory_utilization must not exceed the free memory its MemorySnapshot sees,
    # which is after its own 512 MiB CUDA context. 13.88 GiB free of 15.99: 0.90 asks 14.39 GiB > 13.38 GiB, refused;
    # floor((13.88 - 0.5) / 15.99 x 100) / 100 = 0.83 (13.27 GiB) starts. Without the context margin it would be 0.86
    r = _free_plan(13.88)
    assert r["fits_as_requested"] is False and r["fits"] is True
    # (task ellm25) 0.83 x 15.99 = 13.27 GiB leaves 0.61 GiB of the 13.88 free beside the share: the 0.5 GiB context and
    # 0.11 GiB, less than the CUDA graphs take (0.3-1 GiB in vLLM's "Graph capturing finished" lines): captured eager
    assert r["command"].endswith("--gpu-memory-utilization 0.83 --enforce-eager")
    assert any("--gpu-memory-utilization 0.83 or less" in n for n in r["notes"])
    assert "vllm_would_print" not in r and r["autofit"] == []


def test_free_memory_refuses_the_users_share_too():
    # kv55: the user's share is printed as given or not at all: no command, the note names the share that starts
    r = _free_plan(13.88, gpu_memory_utilization=0.9)
    assert r["fits_as_requested"] is False and r["fits"] is False and r["command"] == ""
    assert any("--gpu-memory-utilization 0.83 or less" in n for n in r["notes"])


@pytest.mark.parametrize("free_gib, version", [(15.5, "0.10.1"), (13.88, "0.9.0")])
def test_free_memory_changes_nothing_where_the_share_fits_or_no_check_runs(free_gib, version):
    # 15.5 GiB free: floor((15.5 - 0.5) / 15.99 x 100) / 100 = 0.93 >= 0.90; V1 before 0.9.1 has no startup check
    s = llm.describe(model="Llama-3.1-8B")
    r = _free_plan(free_gib, version)
    plain = llm.plan(s, "vllm", ctx=8192, weights_dtype="awq", vram=15.99 * GiB, runtime_version=version)
    assert r["fits_as_requested"] is plain["fits_as_requested"] is True
    assert r["command"] == plain["command"]


@pytest.mark.parametrize("free_gib, runtime", [(16.5, "vllm"), (8, "llama.cpp")])
def test_free_memory_bad_input(free_gib, runtime):
    s = llm.describe(model="Llama-3.1-8B")
    with pytest.raises(llm.UserError, match="--free-gib"):
        llm.plan(s, runtime, ctx=8192, vram=15.99 * GiB, free_memory=int(free_gib * GiB))


def test_cli_free_gib():
    import contextlib
    import io
    from gpu_garden.memory import cli
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(["kv", "--model", "Llama-3.1-8B", "--weights-dtype", "awq", "--runtime", "vllm", "--ctx", "8192",
                  "--vram", "15.99", "--free-gib", "13.88", "--runtime-version", "0.10.1"])
    assert "--gpu-memory-utilization 0.83" in out.getvalue()
