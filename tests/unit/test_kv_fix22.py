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

S1. ik_llama.cpp keeps the old term without flash attention, as Ollama's own engine does: its qwen35 graph
    (src/graphs/build_qwen35.cpp at ikawrakow/ik_llama.cpp 8337e4cd) calls build_std_attention and its src/ has no
    k_idxs / v_idxs inputs, so the live set read in llama.cpp's graph is not its. Qwen3.5-9B at 65,536 cells, -ub 512:
      mainline 4 x 512 x (22,535 + 65,536 x 17) = 2,327,853,056 B; ik 2048 x (16,385 + 1,114,112) = 2,315,257,856 B
    Qwen3.5-122B-A10B on four cards at 16,384 cells, -ub 1586, each card:
      mainline 6344 x (34,823 + 16,384 x 33) = 6344 x 575,495 = 3,650,940,280 B
      ik 6344 x (12,289 + 540,672) = 6344 x 552,961 = 3,507,984,584 B
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


def _buffers(model, version, **knobs):
    from gpu_garden.memory.llm import kv as llm
    r = llm.plan(llm.describe(model=model), runtime="llama.cpp", runtime_version=version, flash_attn="off",
                 kv_dtype="f16", **knobs)
    return r["overhead"]["compute_buffer"], [d["compute_buffer"] for d in r.get("devices") or ()]


def test_ik_llama_cpp_keeps_the_old_term_without_flash_attention():
    ik = "ik_llama.cpp 4100 (8337e4cd)"
    assert _buffers("Qwen/Qwen3.5-9B", "b8193", ctx=65_536, ubatch=512)[0] == 4 * 512 * (22_535 + 65_536 * 17)
    assert _buffers("Qwen/Qwen3.5-9B", ik, ctx=65_536, ubatch=512)[0] == 4 * 512 * (16_385 + 65_536 * 17) \
        == 2_315_257_856
    cards = dict(ctx=16_384, ubatch=1586, num_gpus=4, weights_dtype="Q4_K_M")
    assert _buffers("Qwen/Qwen3.5-122B-A10B", "b8829", **cards)[1] == [6344 * 575_495] * 4 == [3_650_940_280] * 4
    assert _buffers("Qwen/Qwen3.5-122B-A10B", ik, **cards)[1] == [6344 * (12_289 + 16_384 * 33)] * 4 \
        == [3_507_984_584] * 4
