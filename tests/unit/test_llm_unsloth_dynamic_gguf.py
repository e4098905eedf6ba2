"""Unsloth Dynamic GGUFs (UD-*) named without their file: the weights are a range, the KV cache and the buffers are
not (batch 33, after first sight: 7 of its 17 rows were refused by name). The range's ends are ggml's block sizes
(ggml-common.h): Q8_0 34 bytes a 32-value block, IQ2_XXS 66 bytes a 256-value block, Q3_K 110, TQ1_0 54, BF16 2
bytes a value. Real files inside it: Qwen3.6-27B-UD-Q8_K_XL, llama-bench 'Q8_0 33.31 GiB' (kyuz0/amd-strix-halo-
toolboxes, b9193); Qwen3.8-27B-UD-IQ2_XXS.gguf 9,010,048,064 B (sudoingX/qwen38-mtp sweeps/rtx-3090.md)."""
import json

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.llm import kv as llm, unsloth
from support.cli_run import unwrap

GiB, MiB = 1 << 30, 1 << 20


def _q36():
    return llm.describe(model="Qwen/Qwen3.6-27B")


@pytest.mark.parametrize("dt, lo_bytes_per_value, hi_bytes_per_value", [
    ("UD-Q8_K_XL", 34 / 32, 2.0),          # Q8_0 throughout .. BF16 throughout
    ("UD-IQ2_XXS", 66 / 256, 34 / 32),     # IQ2_XXS .. Q8_0
    ("ud_q3_k_xl", 110 / 256, 34 / 32),    # Q3_K .. Q8_0
    ("UD-Q3_K_S", 110 / 256, 34 / 32),
    ("UD-TQ1_0", 54 / 256, 34 / 32),
])
def test_range_ends_are_the_base_type_and_the_top_type(dt, lo_bytes_per_value, hi_bytes_per_value):
    s = _q36()
    r = llm.plan(s, "llama.cpp", ctx=4096, weights_dtype=dt)
    assert r["weights_range"] == [int(s.params * lo_bytes_per_value), int(s.params * hi_bytes_per_value)]
    assert "Unsloth Dynamic" in r["notes"][-1] and "--weights-gib" in r["notes"][-1]


def test_real_files_lie_inside_the_range():
    lo, hi = llm.plan(_q36(), "llama.cpp", ctx=4096, weights_dtype="UD-Q8_K_XL")["weights_range"]
    assert lo < 33.31 * GiB < hi
    lo, hi = llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "llama.cpp", ctx=4096, weights_dtype="UD-IQ2_XXS")["weights_range"]
    assert lo < 9_010_048_064 < hi


def test_kv_and_compute_do_not_depend_on_the_weights():
    s = _q36()
    ud = llm.plan(s, "llama.cpp", ctx=32768, weights_dtype="UD-Q8_K_XL", kv_dtype="q8_0", flash_attn="on")
    q8 = llm.plan(s, "llama.cpp", ctx=32768, weights_dtype="Q8_0", kv_dtype="q8_0", flash_attn="on")
    assert ud["kv_total"] == q8["kv_total"]
    assert ud["overhead"]["compute_buffer"] == q8["overhead"]["compute_buffer"]


def test_kyuz0_gemma4_31b_udq8kxl_kv_and_verdict():
    # kyuz0/amd-strix-halo-toolboxes#89 (b9124, Vulkan0 115200 MiB): context 24080 MiB at 262144 x 4 unified slots,
    # projected 58329 MiB of 114134 free: it fits at both ends of the range
    r = llm.plan(llm.describe(model="google/gemma-4-31B-it"), "llama.cpp", ctx=262144, parallel=4, kv_unified=True,
                 weights_dtype="UD-Q8_K_XL", vram=112.5 * GiB, runtime_version="b9124")
    assert r["kv_total"] == 24080 * MiB
    assert r["fits_as_requested"] is True and "depends" not in r


def test_verdict_only_where_both_ends_agree(capsys):
    s = _q36()
    kw = dict(ctx=32768, weights_dtype="UD-Q8_K_XL")
    assert llm.plan(s, "llama.cpp", vram=80 * GiB, **kw)["fits_as_requested"] is True      # 50.1 GiB at the top
    mid = llm.plan(s, "llama.cpp", vram=40 * GiB, **kw)                                   # 26.6 .. 50.1 GiB
    assert mid["fits_as_requested"] is None and "depends on the file" in mid["depends"]
    rc = cli.main(["kv", "--model", "Qwen/Qwen3.6-27B", "--runtime", "llama.cpp", "--weights-dtype", "UD-Q8_K_XL",
                   "--ctx", "32768", "--vram", "40", "--ngl", "all"])
    out = unwrap(capsys.readouterr().out)  # llama.cpp: a partial offload would fit the top end, but -ngl all is the user's
    assert "fits as asked at 26.61 GiB of weights, not at 50.10 GiB: depends on the file" in out  # kept (kv55)
    assert "note: every layer on the GPU does not fit 40.00 GiB with the KV cache at f16, q8_0 or q4_0; -ngl " in out
    assert rc == 1
    # vLLM has no offload: 26.9 B parameters x 4.5 bits (Q4_K) fit a 23.5 GiB card, x 8.5 bits (Q8_0) do not
    rc = cli.main(["kv", "--model", "Qwen/Qwen3.6-27B", "--runtime", "vllm", "--weights-dtype", "UD-Q4_K_XL",
                   "--ctx", "32768", "--vram", "23.5"])
    out = unwrap(capsys.readouterr().out)
    assert "depends on the file: give --gguf or --weights-gib" in out and rc == 1
    # "fits with the flags below" at the low end only: the flags printed are the low end's (the top end has none).
    # 14.21 GiB since task kv66/kv67 (14.12 before): the low end was 15,162,553,568 B = 14.121 GiB, and vLLM's
    # MRotaryEmbedding table (Qwen 3.6's mrope_section) is 262,144 x 4 positions x 64 rotary values x 2 B =
    # 134,217,728 B instead of 33,554,432: 15,162,553,568 + 100,663,296 = 15,263,216,864 B = 14.215 GiB
    assert "fits with the flags below at 14.21 GiB of weights" in out
    # fixX (rev52 A): the GGUF file that was sized, not the repo's 16-bit weights
    assert "\n  vllm serve ./Qwen3.6-27B-UD-Q4_K_XL.gguf --tokenizer Qwen/Qwen3.6-27B --max-model-len 32768" in out


@pytest.mark.parametrize("flag, value, expect", [("--weights-gib", "33.31", int(33.31 * GiB)),
                                                 ("--weights-size", "35.8GB", 35_800_000_000),
                                                 ("--weights-size", "9010048064", 9_010_048_064)])
def test_the_users_figure_is_the_weights(capsys, flag, value, expect):
    rc = cli.main(["kv", "--model", "Qwen/Qwen3.6-27B", "--runtime", "llama.cpp", "--weights-dtype", "UD-Q8_K_XL",
                   "--ctx", "4096", flag, value, "--json"])
    r = json.loads(capsys.readouterr().out)
    assert rc == 0 and r["weights"] == expect and "weights_range" not in r
    assert r["weights_how"].startswith("as given")


@pytest.mark.parametrize("argv", [["--weights-size", "12 parsecs"], ["--weights-gib", "0"],
                                  ["--weights-gib", "30", "--weights-size", "30GB"], ["--weights-dtype", "UD-XYZ"]])
def test_bad_weights_figures_are_refused(capsys, argv):
    try:  # argparse exits; a UserError returns 2 with its message
        rc = cli.main(["kv", "--model", "Qwen/Qwen3.6-27B", "--runtime", "llama.cpp"] + argv)
    except SystemExit as e:
        rc = e.code
    assert rc == 2 and "error" in capsys.readouterr().err


def test_a_file_and_a_figure_together_are_refused():
    s = llm.describe(model="Qwen/Qwen3.6-27B")
    from dataclasses import replace
    with pytest.raises(llm.UserError, match="not both"):
        unsloth.given(replace(s, weights_bytes=30 * GiB), 33 * GiB)
