"""Task fix31: the items review27 listed and did not mend (docs /work/tools/s25/review27.md items 8, 9, 11, 12):
SGLang's printed --mem-fraction-static, dp_attention's type, refuse_data_parallel's runtimes, the parallel sizes in
plan()'s output."""
import re

import pytest
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB = 1 << 30


def _printed_fraction(r):
    m = re.search(r"--mem-fraction-static (\S+)", r["command"])
    assert m, r["command"]
    return m.group(1)


@pytest.mark.parametrize("model, knobs", [
    # review27's case: A100 40GB, TP 4, DP attention 4, default fraction 0.767 (its hand figure), printed as 0.77
    ("Qwen/Qwen3-30B-A3B", {"vram": 39.49 * GiB, "weights_dtype": "bf16", "tensor_parallel_size": 4,
                            "data_parallel_size": 4, "dp_attention": True}),
    ("Qwen/Qwen3-30B-A3B", {"vram": 80 * GiB, "mem_fraction_static": 0.8125}),      # a given fraction of 4 places
    ("Gemma-3-27B", {"vram": 80 * GiB}),                                              # the VLM factor, not re-rounded
    ("Gemma-3-27B", {"vram": 80 * GiB, "runtime_version": "0.4.6", "mem_fraction_static": 0.85}),  # the old runner's x 0.95
])
def test_sglang_command_reproduces_the_planned_pool(model, knobs):
    # the command's --mem-fraction-static, given back, must plan the same pool: before fix31 it was rounded to 2
    # places (0.767 -> 0.77), and on a release whose runner lowers a VLM's fraction it printed the lowered one,
    # which that runner would lower again
    s = llm.describe(model=model)
    r = llm.plan(s, "sglang", ctx=8192, **knobs)
    again = llm.plan(s, "sglang", ctx=8192, **dict(knobs, mem_fraction_static=float(_printed_fraction(r))))
    assert r["kv_capacity_tokens"] > 0
    assert again["kv_capacity_tokens"] == r["kv_capacity_tokens"]
    assert again["budget"] == r["budget"]


def test_sglang_dp_attention_command_prints_0767():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "sglang", ctx=8192, vram=39.49 * GiB, weights_dtype="bf16", tensor_parallel_size=4,
                 data_parallel_size=4, dp_attention=True)
    assert _printed_fraction(r) == "0.767"
    assert any(n.endswith("at --mem-fraction-static 0.767") for n in r["notes"])


def test_sglang_two_place_fractions_print_as_before():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, mem_fraction_static=0.9)
    assert _printed_fraction(r) == "0.90"


@pytest.mark.parametrize("bad", ["no", "yes", 1, 0, "True"])
def test_dp_attention_must_be_a_bool(bad):
    # review27 item 12: any truthy value ("no") turned DP attention on, as prefix_caching's bool check refuses
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    with pytest.raises(UserError, match=r"dp_attention is True \(--enable-dp-attention\), False or None"):
        llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, tensor_parallel_size=4, data_parallel_size=4, dp_attention=bad)


@pytest.mark.parametrize("ok", [True, False, None])
def test_dp_attention_bools_still_plan(ok):
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    r = llm.plan(s, "sglang", ctx=8192, vram=80 * GiB, tensor_parallel_size=4, dp_attention=ok,
                 data_parallel_size=4 if ok else None)
    assert ("--enable-dp-attention" in r["command"]) is bool(ok)


def test_json_carries_the_tensor_and_data_parallel_sizes(capsys):
    # review27 item 11: the --json output said neither size, though its figures are one GPU's of a TP group and one
    # engine's / DP rank's; the keys are the CLI options' names
    import json

    from gpu_garden.memory import cli
    base = ["kv", "--model", "Qwen/Qwen3-30B-A3B", "--ctx", "8192", "--vram", "80", "--json"]
    assert cli.main(base + ["--runtime", "vllm", "--tensor-parallel-size", "2", "--data-parallel-size", "4"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["tensor_parallel_size"], r["data_parallel_size"]) == (2, 4)
    assert cli.main(base + ["--runtime", "sglang", "--tensor-parallel-size", "4", "--data-parallel-size", "2",
                            "--enable-dp-attention"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["tensor_parallel_size"], r["data_parallel_size"]) == (4, 2)
    assert cli.main(base + ["--runtime", "llama.cpp"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert (r["tensor_parallel_size"], r["data_parallel_size"]) == (1, 1)
