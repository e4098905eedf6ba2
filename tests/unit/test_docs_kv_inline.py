"""docs/kv.md quotes `gpu-garden kv` output inline (a figure in a sentence, an excerpt after a command): each quote here
is run and must be what the command prints today. test_readme_examples checks the full `$ gpu-garden kv` blocks only;
these quotes had drifted unseen (rev52: 124,448 tokens for 132,144, --max-num-seqs 246 for 244, vLLM's share 10.80 GiB
for 11.04, a command without its --enforce-eager, a total of 22.55 GiB for 22.82)."""
import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from gpu_garden.memory import cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "kv.md"

# (the command the page names, the quote as the page words it, what the command must print); whitespace runs are one
# space on both sides (the page wraps its lines, the table pads its columns)
QUOTES = [
    ("kv --model Qwen/Qwen2.5-7B-Instruct --ctx 32768 --parallel 8 --vram 23.55",
     '"GPU KV cache size: 132,144 tokens; Maximum concurrency ... 4.03x"',
     ["GPU KV cache size: 132,144 tokens; Maximum concurrency for 32,768 tokens per request: 4.03x"]),
    ("kv --model Qwen/Qwen2.5-7B-Instruct --ctx 32768 --vram 23.55",
     "(118,976 tokens and 3.63x, what it still prints without `--parallel`)",
     ["GPU KV cache size: 118,976 tokens; Maximum concurrency for 32,768 tokens per request: 3.63x"]),
    ("kv --model Llama-3.1-8B --weights-dtype awq --runtime vllm --ctx 8192 --vram 15.99 --free-gib 13.88 "
     "--runtime-version 0.10.1",
     "vllm serve MODEL --max-model-len 8192 --kv-cache-dtype auto --gpu-memory-utilization 0.83 --enforce-eager ... "
     "note: vLLM refuses to start: --gpu-memory-utilization 0.90 asks 14.39 GiB, more than the 13.38 GiB",
     ["vllm serve MODEL --max-model-len 8192 --kv-cache-dtype auto --gpu-memory-utilization 0.83 --enforce-eager",
      "note: vLLM refuses to start: --gpu-memory-utilization 0.90 asks 14.39 GiB, more than the 13.38 GiB"]),
    ("kv --model Llama-3.1-8B --weights-dtype awq --runtime vllm --ctx 8192 --vram 15.99 --free-gib 13.88 "
     "--kv-cache-memory 4 --runtime-version 0.10.1",
     "ends `--kv-cache-memory 4294967296 --gpu-memory-utilization 0.83`",
     ["--kv-cache-memory 4294967296 --gpu-memory-utilization 0.83"]),
    ("kv --model Llama-3.1-8B --runtime vllm --runtime-version 0.10.1 --vram 20 --kv-cache-memory 6 --ctx 8192 "
     "--gpu-memory-utilization 0.5 --free-gib 18",
     "`--kv-cache-memory 2095054848`", ["--kv-cache-memory 2095054848"]),
    ("kv --model Llama-3.1-8B --ctx 2048 --kv-cache-memory 0.3 --max-num-batched-tokens 32768 --vram 24",
     "`on 24.00 GiB (fixed KV pool 307.20 MiB, --kv-cache-memory): fits`",
     ["on 24.00 GiB (fixed KV pool 307.20 MiB, --kv-cache-memory): fits",
      "vLLM peaks at 18.92 GiB while profiling (", "; once started it holds 16.35 GiB"]),
    ("kv --model Llama-3.1-8B --runtime-version 0.10.1 --kv-cache-memory 6 --ctx 8192 --vram 22.5 "
     "--max-num-batched-tokens 20000 --max-num-seqs 1 --enforce-eager",
     '("vLLM takes 21.55 GiB once started"', ["vLLM takes 21.55 GiB once started"]),
    ("kv --model Llama-3.1-8B --runtime-version 0.10.1 --kv-cache-memory 6 --ctx 8192 --vram 20 "
     "--max-num-batched-tokens 20000 --max-num-seqs 1 --enforce-eager",
     "is kept as given: the plan does not fit, no command is printed, and the note and the runtime-fit line name the "
     "largest pool that does: the same 6 GiB pool on `--vram 20` gets `--kv-cache-memory 4779409408` there",
     ["(fixed KV pool 6.00 GiB, --kv-cache-memory): does NOT fit", "the largest pool that does is 4.45 GiB "
      "(--kv-cache-memory 4779409408)"]),
    # 241 since task kv66/kv67 (244 before): the room beside the weights is 26 GiB = 27,917,287,424 - 536,870,912 of
    # CUDA context - 64,424,509 outside PyTorch - the weights, which hold vLLM's MRotaryEmbedding table (Qwen 3.5's
    # mrope_section) of 262,144 x 4 positions x 64 rotary values x 2 B = 134,217,728 B instead of 33,554,432:
    # 18,853,181,920 + 100,663,296 = 18,953,845,216 B; room 8,362,146,787 B (8,462,810,083 before). A profiling-cache
    # block is 8 tensors x a 2,162,688 B page (528 tokens x 4 KV heads x 256 x 2 (K, V) x 2 B) = 17,301,504 B:
    # 8,362,146,787 // 17,301,504 = 483 blocks (489 before), and 0.18's 2 x seqs blocks fit 483 // 2 = 241 sequences
    ("kv --model Qwen3.5-9B --runtime vllm --runtime-version 0.18.0 --vram 26 --parallel 256 --ctx 1024",
     "prints `--max-num-seqs 241`", ["--max-num-seqs 241 "]),
    ("kv --model qwen3.6:27b --runtime ollama --runtime-version 0.24.0 --ctx 32768 --vram 23.6",
     "state checkpoints 3.51 GiB copies of each slot's DeltaNet state kept to resume a shared prefix total on GPU "
     "22.82 GiB the lines above, every layer on the GPU",
     ["state checkpoints 3.51 GiB copies of each slot's DeltaNet state kept to resume a shared prefix",
      "total on GPU 22.82 GiB the lines above, every layer on the GPU"]),
    ("kv --model Qwen/Qwen3-8B --vram 12",
     "(`does NOT fit: weights alone 15.27 GiB > vLLM's share 11.04 GiB of 12.00 GiB`: Qwen/Qwen3-8B on `--vram 12`)",
     ["on 12.00 GiB: does NOT fit: weights alone 15.27 GiB > vLLM's share 11.04 GiB of 12.00 GiB"]),
]


def _one_space(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("command,quote,printed", QUOTES, ids=[q[0] for q in QUOTES])
def test_kv_doc_quote_is_what_kv_prints(command, quote, printed):
    assert _one_space(quote) in _one_space(DOC.read_text(encoding="utf-8")), "docs/kv.md no longer quotes this"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(shlex.split(command))
    got = _one_space(out.getvalue())
    for line in printed:
        assert _one_space(line) in got, f"{command} no longer prints {line!r}"


def test_a_pool_that_does_not_fit_prints_no_command():
    # (rev54) docs/kv.md's "no command is printed" for the 6 GiB pool on --vram 20 (kv55's rule): the page said "the
    # command prints" the lowered pool after kv55 stopped printing one (fails on the page before this change's wording
    # through the quote above, and here where a `vllm serve` line comes back)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(shlex.split("kv --model Llama-3.1-8B --runtime-version 0.10.1 --kv-cache-memory 6 --ctx 8192 --vram 20 "
                             "--max-num-batched-tokens 20000 --max-num-seqs 1 --enforce-eager"))
    assert "does NOT fit" in out.getvalue() and "vllm serve" not in out.getvalue(), out.getvalue()


# the page's indented excerpts after a `    gpu-garden kv ...` line (4 spaces: a markdown code block)
EXCERPT = re.compile(r"^    (gpu-garden kv [^\n]*)\n((?:    [^\n]*\n)+)", re.M)


def test_docs_kv_indented_excerpts_are_lines_kv_prints():
    # (mend56) the quotes above collapse whitespace, so an excerpt that shows a line the CLI wraps passed as one long
    # line (the 231-character "vLLM refuses to start" note). Here each line shown (the block's 4 spaces off, "..." aside)
    # must be a line the command prints, in the order it prints them; fails with that note back on one line
    blocks = EXCERPT.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 2, "docs/kv.md no longer shows its indented kv excerpts"
    for command, shown in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            cli.main(shlex.split(command)[1:])
        printed = iter(line.rstrip() for line in out.getvalue().splitlines())
        for line in shown.splitlines():
            line = line[4:].rstrip()
            if line in ("...", ""):
                continue
            assert any(p == line for p in printed), f"{command}: docs/kv.md shows a line kv does not print: {line!r}"
