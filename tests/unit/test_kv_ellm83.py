"""Task ellm83 (kv-accuracy round 105): llama.cpp's compute buffer without flash attention for Qwen3.5's gated
attention (qwen35 / qwen35moe), a regression round on rows already in the set.

1. The term beside the scores (memory/llm/runtimes/llamacpp_noflash.py). At the peak, the scores' allocation, ggml-alloc
   holds (f32 values a token): the residual stream's n_embd blocks (2 for qwen35, 3 for qwen35moe), Qcur_full
   (2 x n_head x head_dim, held by the gate's view until after the attention), Q normed and roped (n_head x head_dim),
   v_idxs (n_kv_heads x head_dim int64 = 2 slots each: the V cache is transposed without flash attention), k_idxs (one
   int64 = 2), the M-RoPE positions (4 int32) and the output ids (1 int32); beside them the mask (cells) and the scores
   (n_head x cells). Before this round every architecture had 1 + 4 x n_embd.
     Qwen3.5-9B (d 4096, 16 heads, 4 KV heads, head_dim 256): 2 x 4096 + 3 x 16 x 256 + 2 x 4 x 256 + 2 + 4 + 1
       = 8192 + 12,288 + 2048 + 7 = 22,535 (was 1 + 16,384 = 16,385)
     Qwen3.5-122B-A10B (d 3072, 32 heads, 2 KV heads, head_dim 256): 3 x 3072 + 3 x 32 x 256 + 2 x 2 x 256 + 7
       = 9216 + 24,576 + 1024 + 7 = 34,823 (was 1 + 12,288 = 12,289)
   ghghang16's Qwen3.5-9B Q8_0 on a T4 at 65,536 cells, -ub 512, -fa off (b8193), printed 'CUDA0 compute buffer size =
   2220.01 MiB': 4 x 512 x (22,535 + 65,536 x 17) = 2048 x 1,136,647 = 2,327,853,056 B = 2220.01 MiB (was 2048 x
   1,130,497 = 2,315,257,856 B = 2208.0 MiB).
   miminashi's Qwen3.5-122B-A10B on four P100s (b8829, experts of 36 layers on the CPU), per card:
     16,384 cells, -ub 1586: 4 x 1586 x (34,823 + 16,384 x 33) = 6344 x 575,495 = 3,650,940,280 B = 3481.81 MiB
       (printed CUDA1 3481.80, CUDA3 3481.81; was 6344 x 552,961 = 3,507,984,584 B = 3345.47)
     32,768 cells, -ub 1586 (OOM): 6344 x (34,823 + 1,081,344) = 6344 x 1,116,167 = 7,080,963,448 B = 6752.93 MiB
       ('allocating 6752.93 MiB on device 1'; was 6616.60)
     8192 cells, -ub 8192 (OOM): 4 x 8192 x (34,823 + 270,336) = 32,768 x 305,159 = 9,999,450,112 B = 9536.22 MiB
       ('allocating 9536.19 MiB on device 1': a middle card holds no output ids, 32,768 B less; was 8832.03)
2. -ub above -c: llama.cpp caps n_batch at n_ctx and n_ubatch at n_batch (src/llama-context.cpp 161-163 at
   TheTom/llama-cpp-turboquant 69d8e4be; ik_llama.cpp src/llama.cpp the same), so the 4096-context start with -b/-ub
   8192 reserved a 4096-token graph ('n_ubatch = 4096'). Per card: 4 x 4096 x (34,823 + 4096 x 33) = 16,384 x 169,991
   = 2,785,132,544 B = 2656.11 MiB (printed CUDA1 2656.09); the output card's logits 4 x 4096 x (3072 + 248,320)
   = 16,384 x 251,392 = 4,118,806,528 B = 3928.0 MiB (printed 4024.00). At -ub 8192 kv had 4 x 8192 x (34,823 +
   135,168) = 5,570,265,088 B (5312.22) a card and 7856.0 on the output card.
"""
import json
from pathlib import Path

from support.pack import load_benchmark

MiB = 1 << 20
ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data" / "llm_measured.json"
MODELS = ROOT / "memory" / "llm" / "models"
T4_9B = "llamacpp-ghghang16-qwen35-9b-q8-t4-64k-f16kv-noFA-mmproj-fit"
P100 = "llamacpp-miminashi-qwen35-122b-a10b-q4km-4xp100-"
ROW16K = "mimi-qwen35-122b-a10b-q4km-4xp100-16k-ub1586-nofa-ot36"
OOM32K = P100 + "32k-ub1586-nofa-ot36-oom"
OOM8K = P100 + "8k-ub8192-nofa-ot36-oom"
ROW4K = P100 + "4k-ub4096-nofa-ot36"


def _row(rid):
    return next(r for r in json.loads(DATA.read_text())["rows"] if r["id"] == rid)


def _cards(rid):
    _, res = load_benchmark("bench_llm")._plan(_row(rid))
    return [d["compute_buffer"] for d in res["devices"]]


def _spec(name):
    from gpu_garden.memory.llm.spec import from_config
    return from_config(json.loads((MODELS / f"{name}.json").read_text()), "config.json")


def test_token_values_beside_the_scores():
    from gpu_garden.memory.llm.runtimes.llamacpp_noflash import no_flash_token_values
    assert no_flash_token_values(_spec("Qwen3.5-9B")) == 22_535
    assert no_flash_token_values(_spec("Qwen3.5-122B-A10B")) == 34_823
    assert no_flash_token_values(_spec("Qwen3.5-122B-A10B"), mainline=False) == 1 + 4 * 3072  # Ollama's own engine
    assert no_flash_token_values(_spec("Qwen3-8B")) == 1 + 4 * 4096                         # not read: unchanged


def test_t4_qwen35_9b_compute_buffer_is_the_printed_one():
    b = load_benchmark("bench_llm")
    _, res = b._plan(_row(T4_9B))
    assert res["overhead"]["compute_buffer"] == 4 * 512 * (22_535 + 65_536 * 17) == 2_327_853_056
    s = b.score(_row(T4_9B))
    assert s["compute_mib"] == (2220.0, 2220.01)   # kv's figure rounds 2220.0147 to one place


def test_p100_qwen35_122b_cards_without_flash_attention():
    assert _cards(ROW16K) == [4 * 1586 * (34_823 + 16_384 * 33)] * 4 == [3_650_940_280] * 4
    assert abs(3_650_940_280 / MiB - 3481.81) < 0.005
    assert _cards(OOM32K) == [7_080_963_448] * 4 and round(7_080_963_448 / MiB, 2) == 6752.93
    # the printed 9536.19 is 32,768 B (a middle card's missing output ids) under kv's 9536.22
    assert _cards(OOM8K) == [9_999_450_112] * 4 and round((9_999_450_112 - 32_768) / MiB, 2) == 9536.19


def test_ubatch_above_the_context_is_capped_at_it():
    cards = _cards(ROW4K)
    assert cards[:3] == [4 * 4096 * (34_823 + 4096 * 33)] * 3 == [2_785_132_544] * 3
    assert cards[3] == 4 * 4096 * (3072 + 248_320) == 4_118_806_528
