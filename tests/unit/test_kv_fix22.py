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

D5. The round's two hand figures, per card (bench_llm.json scores no card):
    131,072 cells, -ub 1586, no flash attention, attention on the CPU (batch 105, OOM), every card:
      4 x 1586 x (34,823 + 131,072 x 33) = 6344 x 4,360,199 = 27,661,102,456 B = 26379.68 MiB (printed CUDA0 26474.02)
    its flash-attention sibling at 4096 cells, -b/-ub 8192 (batch 105), capped at -ub 4096: a middle card holds the
    feed-forward's live set (the routed experts: max(3 x 8 x 1024 + 3072, 8 x 1024 + 8 x 3072 + 3072) = 35,840 a
    token) beside the mask's f16 cast (2 bytes x 4096 x 4096):
      4 x 4096 x 35,840 + 2 x 16,777,216 = 587,202,560 + 33,554,432 = 620,756,992 B = 592.0 MiB (printed 944.13;
      1184.0 at -ub 8192: 4 x 8192 x 35,840 + 2 x 4096 x 8192 = 1,241,513,984 B)
      the output card the logits: 4 x 4096 x (3072 + 248,320) = 4,118,806,528 B = 3928.0 MiB (printed 4024.00)
D3. Batch 111's 1024-context sibling (-b/-ub 8192, flash attention), capped at -ub 1024 (not scored):
      a middle card 4 x 1024 x 35,840 + 2 x 1024 x 1024 = 146,800,640 + 2,097,152 = 148,897,792 B = 142.0 MiB
      (printed 230.03; 1136.0 at -ub 8192: 1,174,405,120 + 2 x 1024 x 8192 = 1,191,182,336 B)
      the output card 4 x 1024 x 251,392 = 1,029,701,632 B = 982.0 MiB (printed 1006.00; 7856.0 at -ub 8192)
D2. Qwen3-Next (qwen3next) projects its query and gate together too (qwen3next.cpp 112-167: Qcur_full held by the
    gate's view until the ggml_cont after build_attn), but its graph was not traced: it keeps the old term, 1 + 4 x 2048
    = 8193 a token, a deliberate choice (by analogy about 3 x 2048 + 3 x 16 x 256 + 2 x 2 x 256 + 2 + 1 + 1 = 19,460,
    22 MiB more at -ub 512; docs/kv-accuracy.md lists it as open). The same for its GGUF name, qwen3next.
"""
import runpy
import sys
from pathlib import Path

import pytest

from support.pack import load_benchmark

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
    assert no_flash_token_values(s122, mainline=False) == 1 + 4 * 3072


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


def _cards(rid):
    import json
    rows = json.loads((ROOT / "benchmarks" / "data" / "llm_measured.json").read_text())["rows"]
    _, res = load_benchmark("bench_llm")._plan(next(r for r in rows if r["id"] == rid))
    return [d["compute_buffer"] for d in res["devices"]]


P100 = "mimi-qwen35-122b-a10b-q4km-4xp100-"


def test_the_round_105_hand_figures_per_card():
    assert _cards(P100 + "131k-ub1586-nofa-ot36-attn49-oom") == [6344 * 4_360_199] * 4 == [27_661_102_456] * 4
    assert round(27_661_102_456 / MiB, 2) == 26379.68
    middle = 4 * 4096 * 35_840 + 2 * 4096 * 4096
    assert _cards(P100 + "4k-ub4096-ot36") == [middle] * 3 + [4 * 4096 * (3072 + 248_320)] \
        == [620_756_992] * 3 + [4_118_806_528]
    assert (620_756_992 / MiB, 4_118_806_528 / MiB) == (592.0, 3928.0)


def test_batch_111_1k_ub8192_cards_are_capped_at_the_context():
    middle = 4 * 1024 * 35_840 + 2 * 1024 * 1024
    assert _cards(P100 + "1k-ub8192-ot36") == [middle] * 3 + [4 * 1024 * 251_392] == [148_897_792] * 3 + [1_029_701_632]
    assert (148_897_792 / MiB, 1_029_701_632 / MiB) == (142.0, 982.0)


def test_qwen3next_keeps_the_old_term(tmp_path):
    import json

    from gpu_garden.memory.llm.runtimes.llamacpp_noflash import no_flash_token_values
    from gpu_garden.memory.llm.spec import from_config, from_gguf_metadata
    cfg = json.loads((ROOT / "memory" / "llm" / "models" / "Qwen3-Next-80B-A3B.json").read_text())
    s = from_config(cfg, "config.json")
    assert s.arch == "qwen3_next" and no_flash_token_values(s) == 1 + 4 * 2048 == 8193
    g = from_gguf_metadata({"general.architecture": "qwen3next", "qwen3next.block_count": 4,
                            "qwen3next.embedding_length": 2048, "qwen3next.attention.head_count": 16,
                            "qwen3next.attention.head_count_kv": 2, "qwen3next.attention.key_length": 256})
    assert no_flash_token_values(g) == 8193
