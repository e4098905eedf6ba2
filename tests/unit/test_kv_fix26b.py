"""fix26b: plan() refuses every setting its runtime does not read, from the one table the CLI refuses its options by
(plan_checks.READ_BY: plan()'s setting, the CLI option, the runtimes that read it). Before, plan() refused only
n_cpu_moe, prefix_caching and cpu_offload_gb and silently ignored the ~25 other rows the CLI refused (review25 item 7:
gpu_memory_utilization for llama.cpp, flash_attn or mmproj for vLLM, ...)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import plan_checks as PC
from gpu_garden.memory.llm.runtimes import RUNTIMES

MODEL = "Qwen/Qwen3-30B-A3B"


# Representative settings per runtime, each refused naming the plan() argument and the CLI option it stands for.
# Breaking it: check_names' loop over READ_BY out (or back to the three-row KNOB_READ_BY).
@pytest.mark.parametrize("runtime, knob, value, option", [
    ("llama.cpp", "gpu_memory_utilization", 0.9, "--gpu-memory-utilization"),
    ("llama.cpp", "max_num_seqs", 8, "--max-num-seqs"),
    ("ollama", "enforce_eager", True, "--enforce-eager"),
    ("ollama", "mem_fraction_static", 0.8, "--mem-fraction-static"),
    ("vllm", "flash_attn", True, "--flash-attn"),
    ("vllm", "mmproj", "mmproj.gguf", "--mmproj"),
    ("vllm", "ngl", 20, "--ngl"),
    ("vllm", "mem_fraction_static", 0.8, "--mem-fraction-static"),
    ("sglang", "ubatch", 512, "--ubatch"),
    ("llama.cpp", "free_memory", 20 << 30, "--free-gib"),  # (ellm79) SGLang reads it now (its pool follows free memory)
    ("sglang", "cuda_graph_memory", 1 << 30, "--cuda-graph-gib"),
    ("sglang", "kv_dtype_v", "q8_0", "--kv-dtype-v"),
])
def test_plan_refuses_a_setting_its_runtime_does_not_read(runtime, knob, value, option):
    s = llm.describe(model=MODEL)
    with pytest.raises(UserError, match=rf"^{runtime} does not read {knob} \({option}, "):
        llm.plan(s, runtime, ctx=4096, vram=80 << 30, **{knob: value})


# Every row of the table is enforced by plan(): each setting given to a runtime outside its row is refused. The rows
# come from the table itself, so a row plan() stops reading fails here. Breaking it: plan() skipping READ_BY.
@pytest.mark.parametrize("knob, cli, rts", PC.READ_BY, ids=[r[0] for r in PC.READ_BY])
def test_every_row_of_the_table_is_enforced_by_plan(knob, cli, rts):
    others = [r for r in RUNTIMES if r not in rts]
    assert others, f"{knob}: read by every runtime, so not a row of this table"
    s = llm.describe(model=MODEL)
    value = PC.ONE_FOR_ALL.get(knob, 0) + 1  # 1, or for tensor_parallel_size (one GPU: every runtime runs 1) 2
    for runtime in others:
        with pytest.raises(UserError, match=rf"^{runtime} does not read {knob} \("):
            llm.plan(s, runtime, ctx=4096, vram=80 << 30, **{knob: value})


def test_the_table_names_settings_plan_takes_and_options_the_cli_has():
    from gpu_garden.memory import cli
    parser = cli.build_parser() if hasattr(cli, "build_parser") else None
    knobs = [k for k, _, _ in PC.READ_BY]
    assert len(set(knobs)) == len(knobs) and set(knobs) <= set(PC.KNOBS)
    if parser is not None:
        kv = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "kv")[1]
        dests = {a.dest for a in kv._actions}
        assert {c for _, c, _ in PC.READ_BY} <= dests


# The same refusal from the CLI (its message unchanged: the option, the runtimes that read it) and from plan().
@pytest.mark.parametrize("runtime, args, knob, value, cli_words", [
    ("llama.cpp", ["--gpu-memory-utilization", "0.9"], "gpu_memory_utilization", 0.9,
     "does not read --gpu-memory-utilization (vLLM)"),
    ("vllm", ["--flash-attn", "on"], "flash_attn", True, "does not read --flash-attn (llama.cpp, Ollama)"),
])
def test_the_cli_and_plan_refuse_the_same_setting(runtime, args, knob, value, cli_words, capsys):
    from gpu_garden.memory import cli
    assert cli.main(["kv", "--model", MODEL, "--runtime", runtime, "--ctx", "4096"] + args) == 2
    assert cli_words in capsys.readouterr().err
    with pytest.raises(UserError, match=f"{runtime} does not read {knob} "):
        llm.plan(llm.describe(model=MODEL), runtime, ctx=4096, **{knob: value})


# The runtimes that read a setting still take it.
@pytest.mark.parametrize("runtime, knob, value", [
    ("vllm", "gpu_memory_utilization", 0.85), ("llama.cpp", "flash_attn", True), ("ollama", "ubatch", 512),
    ("sglang", "mem_fraction_static", 0.8), ("llama.cpp", "ngl", 20),
])
def test_the_runtimes_that_read_a_setting_still_take_it(runtime, knob, value):
    r = llm.plan(llm.describe(model=MODEL), runtime, ctx=4096, vram=80 << 30, weights_dtype=None, **{knob: value})
    assert r["weights"] > 0
