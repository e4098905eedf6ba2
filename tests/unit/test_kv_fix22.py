"""Task fix22 (review rev19 of kv round 105).

B1. A spec read from a GGUF names the family by general.architecture, qwen35 / qwen35moe, not Hugging Face's qwen3_5 /
    qwen3_5_moe, and the gates matched the latter only. GGUFs written by benchmarks/llamacpp_reserve/mk_gguf.py (the
    files the round's reserve runs were traced on; 4 layers here, a sparse file) read through load_gguf:
      9B shape (qwen35: d 4096, 16 heads, 4 KV heads x 256, dense): 2 x 4096 + 3 x 16 x 256 + 2 x 4 x 256 + 2 + 4 + 1
        = 8192 + 12,288 + 2048 + 7 = 22,535 values a token (the old term: 1 + 4 x 4096 = 16,385)
      122B shape (qwen35moe: d 3072, 32 heads, 2 KV heads x 256, 256 experts): 3 x 3072 + 3 x 32 x 256 + 2 x 2 x 256
        + 7 = 9216 + 24,576 + 1024 + 7 = 34,823 (the old term: 1 + 4 x 3072 = 12,289)
    The 9B at 65,536 cells, -ub 512, no flash attention (the scores 65,536 x 16 + the mask 65,536 = 65,536 x 17):
      4 x 512 x (22,535 + 1,114,112) = 2048 x 1,136,647 = 2,327,853,056 B = 2220.01 MiB, the printed CUDA0 figure
      (the old term: 2048 x 1,130,497 = 2,315,257,856 B = 2208.00 MiB).
    The logits (1024-token vocabulary here: 4 x 512 x (4096 + 1024) = 10 MiB) are not at that peak.
    The same gap in MASK_UNDER_LOGITS_ARCHS: a qwen35moe GGUF on Vulkan takes the mask under the logits, as a
    qwen3_5_moe config does; the dense qwen35 does not.
"""
import runpy
import sys
from pathlib import Path

import pytest

MiB = 1 << 20
ROOT = Path(__file__).resolve().parents[2]
MK_GGUF = ROOT / "benchmarks" / "llamacpp_reserve" / "mk_gguf.py"


@pytest.fixture(scope="module")
def gguf_specs(tmp_path_factory):
    pytest.importorskip("gguf")
    from gpu_garden.memory.llm.spec import load_gguf
    d = tmp_path_factory.mktemp("qwen35_gguf")
    specs = {}
    argv = sys.argv
    try:
        for kind in ("9b", "122b"):
            sys.argv = ["mk_gguf.py", kind, str(d / f"{kind}.gguf"), "4"]
            runpy.run_path(str(MK_GGUF), run_name="__main__")
            specs[kind] = load_gguf(str(d / f"{kind}.gguf"))
    finally:
        sys.argv = argv
    return specs


def test_a_gguf_spec_gets_the_gated_attention_term(gguf_specs):
    from gpu_garden.memory.llm.runtimes.llamacpp_noflash import no_flash_token_values
    s9, s122 = gguf_specs["9b"], gguf_specs["122b"]
    assert (s9.arch, s122.arch) == ("qwen35", "qwen35moe")
    assert no_flash_token_values(s9) == 22_535
    assert no_flash_token_values(s122) == 34_823
    assert no_flash_token_values(s122, graph=False) == 1 + 4 * 3072


def test_a_gguf_9b_compute_buffer_is_the_printed_one(gguf_specs):
    from gpu_garden.memory.llm.runtimes.llamacpp import compute_buffer
    b = compute_buffer(gguf_specs["9b"], 65_536, 512, False)
    assert b == 4 * 512 * (22_535 + 65_536 * 17) == 2_327_853_056
    assert round(b / MiB, 2) == 2220.01


def test_a_gguf_qwen35moe_on_vulkan_takes_the_mask_under_the_logits(gguf_specs):
    from gpu_garden.memory.llm.runtimes.llamacpp import mask_under_logits
    vulkan = {"gpu_name": "AMD Radeon 8060S (Vulkan)"}
    assert mask_under_logits(gguf_specs["122b"], vulkan, None)
    assert not mask_under_logits(gguf_specs["9b"], vulkan, None)
    assert not mask_under_logits(gguf_specs["122b"], {"gpu_name": "NVIDIA Tesla P100"}, None)
