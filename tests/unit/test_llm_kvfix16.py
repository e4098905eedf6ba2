"""Task kvfix16: `gpu-garden kv` findings of the issue-15 acceptance audit (audit15 X3-X6, C4, C5), each expected value
from the runtime's source or history, a config.json's arithmetic or the issue's wording."""
import json

from gpu_garden.memory import cli
from gpu_garden.memory.llm import kv as llm

GiB, KiB = 1 << 30, 1 << 10
QWEN = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct"]
LLAMA_NP4 = QWEN + ["--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "65536", "--parallel", "4",
                    "--vram", "24", "--json"]


def _run(argv, capsys):
    try:
        rc = cli.main(argv)
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    cap = capsys.readouterr()
    return rc, (json.loads(cap.out) if "--json" in argv and cap.out else cap.out), cap.err


def _flags(r):
    return [f["text"] for f in r["flags"]]


# X5: llama-server's flags by build. ggml-org/llama.cpp#14363 (commit 225e7a14, "version: 5913 (225e7a14)") added
# -kvu / --kv-unified; #15434 (release b6325) made -fa take on|off|auto, a bare switch before.

def test_kvu_only_from_the_build_that_has_it(capsys):
    # before b5913 the cache is one (unified) and llama-server has no -kvu: printing it stops the server
    _, old, _ = _run(LLAMA_NP4 + ["--runtime-version", "b5912"], capsys)
    assert "-np 4" in _flags(old) and "-kvu" not in _flags(old)
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="llama.cpp", ctx=65536, parallel=4, weights_dtype="Q4_K_M", vram=24 * GiB,
                 runtime_version="b5913", kv_unified=True)
    assert "-kvu" in _flags(r)


def test_fa_takes_a_value_only_from_b6325(capsys):
    # b4000: flash attention off is the default (no flag); on is the bare switch
    _, off, _ = _run(LLAMA_NP4 + ["--runtime-version", "b4000"], capsys)
    assert not [t for t in _flags(off) if t.startswith("-fa")]
    assert "llama-server" in off["command"] and " -fa" not in off["command"]
    _, on, _ = _run(LLAMA_NP4 + ["--runtime-version", "b4000", "--flash-attn", "on"], capsys)
    assert "-fa" in _flags(on) and "-fa on" not in _flags(on)
    _, q8, _ = _run(LLAMA_NP4 + ["--runtime-version", "b6324", "--kv-dtype", "q8_0"], capsys)
    assert "-fa" in _flags(q8)  # a quantized V cache switches flash attention on: the bare form
    _, new, _ = _run(LLAMA_NP4 + ["--runtime-version", "b6325", "--flash-attn", "off"], capsys)
    assert "-fa off" in _flags(new)
    _, newest, _ = _run(LLAMA_NP4 + ["--flash-attn", "on"], capsys)
    assert "-fa on" in _flags(newest)


# X3: --parallel N prints --max-num-seqs N; the figures are those of that command (vLLM sizes its sampler and its CUDA
# graph captures by max_num_seqs, not by the requests the user expects)

def test_parallel_figures_are_those_of_the_printed_max_num_seqs():
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    common = dict(runtime="vllm", ctx=32768, parallel=8, vram=int(23.55 * GiB))
    implied = llm.plan(spec, **common)
    explicit = llm.plan(spec, **common, max_num_seqs=8)
    default = llm.plan(spec, runtime="vllm", ctx=32768, vram=int(23.55 * GiB))
    assert "--max-num-seqs 8" in implied["command"]
    assert implied["kv_capacity_tokens"] == explicit["kv_capacity_tokens"]
    assert implied["overhead"] == explicit["overhead"]
    assert implied["vllm_would_print"] == explicit["vllm_would_print"]
    # vLLM's default 256 sequences profile a larger sampler batch than 8 do: the default plan keeps a smaller pool
    assert implied["overhead"]["activation_profile"] < default["overhead"]["activation_profile"]
    assert implied["kv_capacity_tokens"] > default["kv_capacity_tokens"]
