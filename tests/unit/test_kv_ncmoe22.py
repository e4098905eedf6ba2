"""Task ncmoe22: llama.cpp's --n-cpu-moe N / --cpu-moe in `gpu-garden kv`. llama.cpp (common/arg.cpp,
ggml-org/llama.cpp#15077) overrides "blk\\.<i>\\.ffn_(up|down|gate)_exps" to the CPU for each of the first N layers:
the routed experts' matmuls go to host memory, the rest of the model where -ngl puts it. Expected values are worked
here from the models' geometry, the ggml types' block sizes and a printed run, not taken from kv."""
from dataclasses import replace

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import weights as W
from gpu_garden.memory.units import GiB, MiB

# gpt-oss-20b: 24 layers, 32 experts, hidden 2880, expert width 2880; gate, up and down per expert, MXFP4 = 17 bytes
# a block of 32 values
GPTOSS_LAYER = 32 * 3 * 2880 * 2880 * 17 // 32


def _gptoss(**k):
    # ontouchstart/rabbit-holes start-server.log (batch 55): llama-server -hf ggml-org/gpt-oss-20b-GGUF --n-cpu-moe 12
    # -c 32768 --no-mmap, b8193 on an Apple M5, 18185 MiB free, n_parallel auto = 4
    return llm.plan(llm.describe(model="openai/gpt-oss-20b"), "llama.cpp", ctx=32768, parallel=4,
                    weights_dtype="MXFP4", vram=18185 * MiB, runtime_version="b8193", kv_unified=True, **k)


# 1. The measured row (llamacpp-rabbitholes-gpt-oss-20b-mxfp4-m5-32k-np4-ncmoe12): 'CPU_REPACK model buffer size =
# 4841.02 MiB' (the 12 layers' experts) and 'MTL0 model buffer size = 6095.68 MiB' (what stays on the GPU).
# Breaking it: the plan.py block that subtracts host_experts_full (or cpu_moe_bytes returning 0).
def test_gptoss20b_ncmoe12_matches_the_printed_buffers():
    r = _gptoss(n_cpu_moe=12)
    assert abs(r["host_experts_full"] / MiB - 4841.02) / 4841.02 < 0.01, r["host_experts_full"] / MiB
    assert abs(r["weights_gpu_full"] / MiB - 6095.68) / 6095.68 < 0.01, r["weights_gpu_full"] / MiB
    # the rule by hand: 12 layers x 32 experts x 3 x 2880 x 2880 MXFP4 values is the printed buffer to the 0.01 MiB
    assert round(12 * GPTOSS_LAYER / MiB, 2) == 4841.02


# 2. The GPU total (what the verdict checks) loses exactly the experts of the first N layers, and --cpu-moe all of
# them; N past the layer count is every layer. Breaking it: the `gpu_w -= moved` line in runtimes/llamacpp.evaluate.
def test_gpu_total_loses_the_first_layers_experts():
    base = _gptoss()
    for n, layers in ((1, 1), (12, 12), (24, 24), (1024, 24)):
        r = _gptoss(n_cpu_moe=n)
        assert base["total"] - r["total"] == pytest.approx(layers * GPTOSS_LAYER, abs=2), n


# 3. A layer -ngl leaves on the CPU is there whole: --n-cpu-moe moves only the experts of the GPU's layers below N.
# Breaking it: cpu_moe_bytes summing from layer 0 whatever `first` is.
def test_layers_already_on_the_cpu_are_not_moved_twice():
    s = llm.describe(model="openai/gpt-oss-20b")
    assert W.cpu_moe_bytes(s, "MXFP4", 12, first=6) == pytest.approx(6 * GPTOSS_LAYER, abs=6)
    assert W.cpu_moe_bytes(s, "MXFP4", 4, first=6) == 0


# 4. The verdict and the largest context use the GPU figure: gpt-oss-20b at 32k on an 8 GiB card does not fit whole
# (weights alone 11.2 GiB) but does with every expert on the CPU (24 x GPTOSS_LAYER = 9.46 GiB off the GPU).
# Breaking it: the same `gpu_w -= moved` line.
def test_the_fits_verdict_and_largest_context_use_the_gpu_share():
    s = llm.describe(model="openai/gpt-oss-20b")
    kw = dict(ctx=32768, parallel=1, weights_dtype="MXFP4", vram=8 * GiB, runtime_version="b8193")
    whole = llm.plan(s, "llama.cpp", **kw)
    moved = llm.plan(s, "llama.cpp", n_cpu_moe=1024, **kw)
    assert whole["fits_as_requested"] is False
    assert moved["fits_as_requested"] is True
    assert moved["max_ctx"] >= 32768
    assert whole["total"] - moved["total"] == pytest.approx(24 * GPTOSS_LAYER, abs=2)


# 5. Each expert tensor at the file type's own type (llama-quant.cpp): Q4_K_M keeps ffn_gate/up_exps in Q4_K (4.5 bits)
# and ffn_down_exps in Q6_K (6.5625) on use_more_bits' layers (the first and last eighth, every third between), Q4_K
# elsewhere. Qwen3-30B-A3B: 48 layers, 128 experts of 2048 x 768 (both multiples of 256: no fallback type).
# Breaking it: EXPERT_BASE_TYPE's Q4_K_M row mapped to Q6_K, or the use_more_bits condition dropped.
def test_q4km_experts_take_q6k_down_on_the_more_bits_layers():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    per = 128 * 2048 * 768  # values of one of the three matmuls, all 128 experts
    b = W.expert_layer_bytes(s, "Q4_K_M")
    assert b[0] == per * (4.5 + 4.5 + 6.5625) / 8  # layer 0 < 48 // 8: more bits
    assert b[6] == per * (4.5 + 4.5 + 4.5) / 8      # (6 - 6) % 3 != 2
    assert b[8] == per * (4.5 + 4.5 + 6.5625) / 8  # (8 - 6) % 3 == 2
    assert b[47] == per * (4.5 + 4.5 + 6.5625) / 8  # the last eighth


# 6. Dense first layers hold no routed experts: DeepSeek-V2-Lite's first_k_dense_replace = 1, so --n-cpu-moe 1
# moves nothing; a MoE model whose layers differ in size with no per-layer MoE list is refused, not guessed.
# Breaking it: moe_layer_flags returning [True] * n.
def test_dense_first_layers_move_nothing_and_unknown_geometry_is_refused():
    s = llm.describe(model="deepseek-ai/DeepSeek-V2-Lite")
    assert W.expert_layer_bytes(s, "Q8_0")[0] == 0
    assert W.cpu_moe_bytes(s, "Q8_0", 1) == 0
    # layer 1: 64 experts x 3 x 2048 x 1408 values, all three Q8_0 (8.5 bits): 1408 is not a multiple of 256, but
    # Q8_0's blocks are 32 values (1408 = 44 x 32), so ffn_down_exps takes no K-quant fallback type
    per = 64 * 2048 * 1408
    assert W.expert_layer_bytes(s, "Q8_0")[1] == int(per / 8 * (8.5 + 8.5 + 8.5))
    with pytest.raises(UserError, match="which of them hold the routed experts"):
        W.expert_layer_bytes(replace(s, moe_layers=()), "Q8_0")


# 7. Refusals: a dense model has no experts to move; a file type whose expert mix kv does not know; Ollama has no
# such option. Breaking it: the checks in moe_layer_flags / expert_layer_bytes / plan_checks.READ_BY.
def test_refusals():
    dense = llm.describe(model="meta-llama/Llama-3.1-8B-Instruct")
    with pytest.raises(UserError, match="no routed experts"):
        llm.plan(dense, "llama.cpp", ctx=4096, weights_dtype="Q4_K_M", vram=8 * GiB, n_cpu_moe=4)
    with pytest.raises(UserError, match="expert tensor types"):
        W.expert_layer_bytes(llm.describe(model="Qwen/Qwen3-30B-A3B"), "Q3_K_M")


# 8. The CLI: --n-cpu-moe N and --cpu-moe reach the plan and the suggested command; Ollama (no such option) refuses it.
# Breaking it: n_cpu_moe out of report._CLI_KNOBS, or out of plan_checks.READ_BY.
def test_cli_reads_the_option(capsys):
    from gpu_garden.memory import cli
    base = ["kv", "--model", "openai/gpt-oss-20b", "--weights-dtype", "MXFP4", "--ctx", "32768", "--vram", "8",
            "--runtime-version", "b8193"]
    assert cli.main(base + ["--runtime", "llama.cpp", "--n-cpu-moe", "12"]) == 0
    out = capsys.readouterr().out
    assert "experts, host RAM" in out and "--n-cpu-moe 12" in out
    assert cli.main(base + ["--runtime", "llama.cpp", "--cpu-moe"]) == 0
    assert "--n-cpu-moe 24" in capsys.readouterr().out
    assert cli.main(base + ["--runtime", "ollama", "--n-cpu-moe", "12"]) == 2
    assert "--n-cpu-moe (llama.cpp)" in capsys.readouterr().err


# 9. bench_llm passes an input's n_cpu_moe to the plan (every input key but ctx/parallel/weights_dtype is a knob), so a
# row whose input carries it is scored on the GPU share: the batch-55 row's MTL0 buffer (6095.68 MiB) against kv's GPU
# weights. The data file is not edited: the row is copied here. And such an input no longer counts as an unexpressed
# tensor override (only -ot does). Breaking it: n_cpu_moe out of plan_checks.KNOBS, or bench_llm.tensor_override as before.
def test_bench_scores_an_n_cpu_moe_input_on_the_gpu_share():
    import json
    from pathlib import Path
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    rows = json.loads((Path(__file__).resolve().parents[2] / "benchmarks/data/llm_measured.json").read_text())
    rows = rows if isinstance(rows, list) else rows["rows"]
    row = next(r for r in rows if r["id"] == "llamacpp-rabbitholes-gpt-oss-20b-mxfp4-m5-32k-np4-ncmoe12")
    assert row["input"]["n_cpu_moe"] == 12  # the run's own '--n-cpu-moe 12' (its notes' command line)
    whole = dict(row, input={k: v for k, v in row["input"].items() if k != "n_cpu_moe"})
    assert b.score(whole)["weights_err"] > 0.5  # without the flag: every expert on the GPU
    assert abs(b.score(row)["weights_err"]) < 0.01
    assert b.tensor_override(whole) and not b.tensor_override(row)
    assert b.tensor_override(dict(row, notes=["-ot exps=CPU"]))


# 10. From a GGUF's tensor table, the bytes are the file's own: mainline's unanchored pattern moves each matched
# layer's ffn_*_exps weights and biases (the batch-55 run's 'CPU model buffer size = 599.48 MiB' is the token table
# plus 12 layers x 3 x 32 x 2880 f32 biases), ik_llama.cpp the weights only; shared experts and other layers stay.
# Breaking it: gguf.py not filling expert_file_bytes, or EXPERT_TENSOR matching ffn_up_shexp.
def test_a_gguf_tensor_table_gives_the_moved_bytes():
    from gpu_garden.memory.llm import spec as llm_spec
    meta = {"general.architecture": "gpt-oss", "general.file_type": 38, "gpt-oss.block_count": 2,
            "gpt-oss.embedding_length": 2880, "gpt-oss.attention.head_count": 64,
            "gpt-oss.attention.head_count_kv": 8, "gpt-oss.attention.key_length": 64,
            "gpt-oss.attention.value_length": 64, "gpt-oss.expert_count": 32, "gpt-oss.expert_used_count": 4,
            "gpt-oss.expert_feed_forward_length": 2880, "gpt-oss.context_length": 131072,
            "tokenizer.ggml.vocab_len": 201088}
    w, b = GPTOSS_LAYER // 3, 32 * 2880 * 4
    tensors = {"token_embd.weight": (1000, "Q8_0", 1), "output.weight": (1000, "Q8_0", 1)}
    for i in range(2):
        for p in ("gate", "up", "down"):
            tensors[f"blk.{i}.ffn_{p}_exps.weight"] = (w, "MXFP4", 1)
            tensors[f"blk.{i}.ffn_{p}_exps.bias"] = (b, "F32", 1)
            tensors[f"blk.{i}.ffn_{p}_shexp.weight"] = (7, "Q8_0", 1)
        tensors[f"blk.{i}.ffn_gate_inp.weight"] = (5, "F32", 1)
    s = llm_spec.from_gguf_metadata(meta, tensors)
    assert W.expert_layer_bytes(s, None) == [3 * (w + b)] * 2
    assert W.cpu_moe_bytes(s, None, 1) == 3 * (w + b)
    assert W.cpu_moe_bytes(s, None, 1, biases=False) == 3 * w
    # the batch-55 run's CPU buffer by hand: 599.48 MiB less the token table's 586.82 MiB (201088 x 2880 Q8_0)
    assert round(599.48 - 201088 * 2880 * 34 / 32 / MiB, 2) == round(12 * 3 * b / MiB, 2)
