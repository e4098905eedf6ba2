"""Task review27: mends to round 55's data parallelism (vLLM --data-parallel-size, SGLang --dp with
--enable-dp-attention). Expected figures are worked by hand from Qwen3-30B-A3B's config.json and the runtimes' source."""
import pytest
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


@pytest.mark.parametrize("knobs", [
    {"runtime_version": "0.6.3"},  # V0 is the default before 0.8
    {"runtime_version": "0.8.4", "gpu_name": "Tesla V100-SXM2-32GB"},  # 0.8-0.9 fall back to V0 below sm 8.0
    {"runtime_version": "0.9.2", "vllm_engine": "v0"},  # VLLM_USE_V1=0
])
def test_vllm_data_parallel_on_the_v0_engine_is_refused(knobs):
    # vllm#18702 (0.8.3): "the config param of data_parallel_size can be only used with v1 engine"
    for model in ("Qwen/Qwen3-30B-A3B", "meta-llama/Llama-3.1-8B-Instruct"):
        s = llm.describe(model=model)
        with pytest.raises(UserError, match="runs on the V1 engine only"):
            llm.plan(s, "vllm", ctx=8192, vram=40 * GiB, data_parallel_size=2, **knobs)


def test_vllm_data_parallel_on_v1_still_plans():
    s = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    r = llm.plan(s, "vllm", ctx=8192, vram=40 * GiB, data_parallel_size=2, runtime_version="0.8.4")
    assert "--data-parallel-size 2" in r["command"]


def test_sglang_dp_attention_keeps_awq_experts_built_in_16_bits():
    # an AWQ MoE on a V100: SGLang builds the routed experts in 16 bits (plan_weights.by_role); DP attention must keep
    # them so. By hand: 48 x 128 x 3 x 2048 x 768 expert params x 2 bytes over tp 2 = 27.0 GiB a GPU; everything else
    # (30.53 B - 28.99 B params, at most 16 bits, whole) adds at most 3.08 GB
    experts = 48 * 128 * 3 * 2048 * 768 * 2 // 2
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "sglang", ctx=8192, vram=32 * GiB, weights_dtype="awq", mem_fraction_static=0.85,
                 tensor_parallel_size=2, data_parallel_size=2, dp_attention=True, gpu_name="Tesla V100-SXM2-32GB")
    assert experts < r["weights"] < experts + 3.08e9


def test_sglang_default_fraction_reserves_dp_attention_padding():
    # sglang#10975's _handle_gpu_memory_settings with --enable-dp-attention adds cuda_graph_max_bs x dp x 3 MiB (and
    # x 1.5 more above a max_bs of 300) before the 10 GiB floor. By hand, A100 40GB (39.49 GiB = 40,437.76 MiB) at
    # TP 4: chunk 4096, max_bs 160; reserved 512 + 1.5 x 4096 + 2 x 160 + 4 / 8 x 1024 = 7,488 MiB, + 160 x 4 x 3 =
    # 9,408 with DP attention 4: (40,437.76 - 9,408) / 40,437.76 = 0.767 (0.815 without)
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "sglang", ctx=8192, vram=39.49 * GiB, weights_dtype="bf16", tensor_parallel_size=4,
                 data_parallel_size=4, dp_attention=True)
    assert any(n.startswith("--mem-fraction-static 0.767: ") and "DP attention 4" in n for n in r["notes"])
    from gpu_garden.memory.llm.runtimes.sglang import default_mfs
    # an 80 GiB card (81,920 MiB) at TP 8: chunk 8192, max_bs 512; 512 + 12,288 + 1,024 + 1,024 = 14,848, + 512 x 4 x
    # (3 + 1.5) = 9,216 at DP 4: (81,920 - 24,064) / 81,920 = 0.70625
    assert default_mfs(8, 81920, None, dp_attention=4) == pytest.approx(0.70625, abs=6e-4)
    assert default_mfs(8, 81920, None) == pytest.approx((81920 - 14848) / 81920, abs=6e-4)


def test_sglang_dp_attention_on_a_release_before_the_read_formula_says_so():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "sglang", ctx=8192, vram=39.49 * GiB, weights_dtype="bf16", tensor_parallel_size=4,
                 data_parallel_size=4, dp_attention=True, runtime_version="0.5.0")
    assert any("was not read for DP attention's reserve" in n for n in r["notes"])


@pytest.mark.parametrize("spelling", ["--dp", "--dp-size"])
def test_sglang_dp_spelling_names_the_kv_option(spelling, capsys):
    # kv prints "--tp 4 --dp 4 --enable-dp-attention" in SGLang's command; typed back, --dp was only "unrecognized"
    from gpu_garden.memory import cli
    with pytest.raises(SystemExit) as e:
        cli.main(["kv", "--model", "Qwen/Qwen3-30B-A3B", "--runtime", "sglang", "--tensor-parallel-size", "4",
                  spelling, "4", "--enable-dp-attention"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert f"SGLang's {spelling} is --data-parallel-size N here" in err and "Traceback" not in err
