"""Task ellm82 (kv-accuracy round 104, batch 109 after its first sight).

Batch 109 is 14 llama.cpp b8829 / b8893 starts of Unsloth's Qwen3.5-122B-A10B Q4_K_M on four Tesla P100-PCIE-16GB
cards (miminashi/llm-server-ops). No formula changed in this round; what the tests hold:

1. A row input corrected after first sight: mimi-qwen35-122b-a10b-q4km-4xp100-32k-ub2048-ot36 cited the author's grep
   summary (compute_buffer_summary.txt) of two startup logs; it now cites the ctx 32768 log itself
   (startup_logs/fa1_ctx32768_b2048_ub2048.log), which prints every figure the row held and the fit step: 'projected to
   use 27305 MiB of device memory vs. 63900 MiB of free device memory', 'successfully fit', 'offloaded 49/49 layers'.
   The row's fit verdict is now scored. By hand, kv's fullest card (CUDA1, 12 of 48 layers, no output):
     weights 9549.21 MiB (printed 9550.77) + KV 192 + RS 37.27 + compute 408 (flash attention, ubatch 2048)
     + context 384 + margin int(0.02 x 15.89 GiB) = 341,235,151 B = 325.43 MiB -> 10,895.9 MiB <= the 16,271.36 MiB
     card: fits, as the run did. Reverting the row (the summary url, no 'fit' in measured) fails both tests.
2. The attn49 row (32k, ubatch 1585, flash attention off, the expert and attention -ot patterns) that kv says does not
   fit while the run started: a guard on what the round found, not a change. kv's compute buffer without flash attention
   is 4 x ubatch x (1 + 4 x n_embd + cells x (1 + n_head)) = 4 x 1585 x (1 + 12,288 + 32,768 x 33) = 6,340 x 1,093,633
   = 6,933,633,220 B (6612.43 MiB) per card, 105.26 MiB under the printed 6717.69 (so not what makes kv refuse); the
   fullest card (CUDA1 / CUDA2: 8736.25 MiB of weights, printed 8737.81) comes to 16,287.38 MiB against 16,271.36, over
   by 16.02 MiB, less than kv's own 325.43 MiB margin: without that margin (llama.cpp keeps none when the fit step
   aborts on the user's -ngl: common/fit.cpp 'n_gpu_layers already set by user', common_init_result loads anyway) the
   card fits. The run printed 265 / 216 MiB free on CUDA1 / CUDA2 after its buffers.
"""
import json
from pathlib import Path

from support.pack import load_benchmark

MiB = 1 << 20
GiB = 1 << 30
DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "llm_measured.json"
ROW2 = "mimi-qwen35-122b-a10b-q4km-4xp100-32k-ub2048-ot36"
ATTN49 = "mimi-qwen35-122b-a10b-q4km-4xp100-32k-ub1585-nofa-ot36-attn49"
VRAM = int(15.89 * GiB)                        # 17,061,757,583 B = 16,271.36 MiB
MARGIN = int(0.02 * VRAM)                      # 341,235,151 B = 325.43 MiB (kv's own: max(256 MiB, 2 %))


def _row(rid):
    return next(r for r in json.loads(DATA.read_text())["rows"] if r["id"] == rid)


def test_row2_cites_the_startup_log_it_was_grepped_from():
    r = _row(ROW2)
    assert r["url"].endswith("2026-04-19_105737_qwen3-122b-c3-phaseR-ctx3-midpoints/startup_logs/"
                              "fa1_ctx32768_b2048_ub2048.log")
    m = r["measured"]
    assert (m["fit"], m["started"], m["layers_on_gpu"], m["layers_model"]) == (True, True, 49, 49)
    assert (m["projected_total_mib"], m["free_total_mib"]) == (27305.0, 63900.0)
    assert "corrected after first sight" in r["inferred"]["url"]


def test_row2_fit_verdict_is_scored_and_agrees():
    b = load_benchmark("bench_llm")
    s = b.score(_row(ROW2))
    assert s["fits"] == (True, True) and s["fits_agree"]
    _, res = b._plan(_row(ROW2))
    card = max(res["devices"], key=lambda d: d["total"])
    assert card["compute_buffer"] == 408 * MiB and card["kv"] == 192 * MiB
    assert abs(card["total"] / MiB - 10895.9) < 0.1 and card["total"] <= VRAM


def test_attn49_refusal_is_kvs_own_margin():
    b = load_benchmark("bench_llm")
    row = _row(ATTN49)
    assert b.fit_aborted_on_ngl(row)
    s = b.score(row)
    assert s["fits"] == (False, True)          # left open: kv refuses, the run started
    _, res = b._plan(row)
    for d in res["devices"]:  # round 105 (test_kv_ellm83): 34,823 values a token beside the scores, not 1 + 4 x 3072
        assert d["compute_buffer"] == 4 * 1585 * (34_823 + 32768 * 33) == 7_076_498_780
    card = max(res["devices"], key=lambda d: d["total"])
    over = card["total"] - VRAM  # 16.02 MiB before round 105, + (7,076,498,780 - 6,933,633,220) B = 136.25 MiB
    assert abs(over / MiB - 152.27) < 0.01 and 0 < over < MARGIN
    assert 0.02 * VRAM > 256 * MiB and abs(MARGIN / MiB - 325.43) < 0.01
