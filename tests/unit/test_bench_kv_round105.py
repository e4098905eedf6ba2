"""benchmarks/kv_round105.py (docs/kv-accuracy.md round 105's figures, task docs48): what it reads from the rows' notes
and from trace.log, kv before the round (the tree of 6632c508), and the differences the doc states, by hand.

Hand figures (MiB = 1,048,576 B):
  P100 122B at 16,384 cells, -ub 1586, a card: before 4 x 1586 x (12,289 + 16,384 x 33) = 6344 x 552,961
    = 3,507,984,584 B; now 6344 x 575,495 = 3,650,940,280 B (3481.808 MiB). Round 104's gap, CUDA1 printed 3481.80:
    (3481.80 x 1,048,576 - 3,507,984,584) / 6344 = 22,532.68 -> 22,533 values a token. CUDA0 printed 3895.15:
    3895.15 - 3481.808 = 413.342 MiB.
  attn49 at 32,768 cells, -ub 1585, a card: now 4 x 1585 x (34,823 + 32,768 x 33) = 7,076,498,780 B, before
    6340 x 1,093,633 = 6,933,633,220 B (6612.428 MiB); printed 6717.69: kv over by (7,076,498,780
    - 7,044,008,509.44) / 6340 = 32,490,270.56 / 6340 = 5124.65 -> 5125 values a token; under before by 6717.69 - 6612.428 = 105.262 MiB.
  8192 cells, -ub 8192: 9,999,450,112 B = 9536.21875 MiB against the asked 9536.19: 0.02875, the largest of the
    four rows that land.
  trace.log, the 9B at 65,536 cells, -ub 512: kq-3 65,536 x 512 x 16 heads x 4 B = 2048 MiB, Qcur_full-3
    2 x 16 x 256 x 512 x 4 B = 16 MiB; the 122B's inp_embd 3072 x 1586 x 4 B = 19,488,768 B, and 3500.4001 less it
    = 3481.8142 MiB.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import kv_round105 as R  # noqa: E402

MiB = 1 << 20


def test_printed_reads_each_cards_compute_line_else_the_failed_ask():
    row = {"notes": ["'CUDA0 compute buffer size = 3895.15 MiB', 'CUDA1 compute buffer size = 3481.80 MiB'", "other"]}
    assert R.printed(row) == {"0": 3895.15, "1": 3481.80}
    oom = {"notes": ["'ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9536.19 MiB on device 1: cudaMalloc "
                     "failed: out of memory'"]}
    assert R.printed(oom) == {"1": 9536.19}
    # the T4 row: its projector's failed allocation comes after the text model's compute buffer, and is not it
    t4 = {"notes": ["'CUDA0 compute buffer size = 2220.01 MiB'; then the mmproj: 'allocating 4657.81 MiB on device 0: "
                    "cudaMalloc failed: out of memory'"]}
    assert R.printed(t4) == {"0": 2220.01}


def test_trace_peaks_takes_sizes_and_holes_from_the_offsets():
    text = "\n".join([
        "# a comment",
        "$ ./reserve q9b.gguf 1024 512",
        "max_size[0] = 6.00 MB: tensors: x [0: 0-100000] (1.00 MB) ",
        "max_size[0] = 30.00 MB: tensors: inp_embd [0: 0-800000] (8.00 MB) a [0: 800000-c00000] (4.00 MB) "
        "c [0: 1e00040-1e00840] (0.00 MB) b [0: 1400000-1e00000] (10.00 MB) ",
        "~llama_context:        CPU compute buffer size is 30.0001 MiB, matches expectation of 30.0001 MiB"])
    run = R.trace_peaks(text)["q9b_1024_512"]
    # the last max_size line; b (at 0x1400000) sorts before c: an 8 MiB hole after a, 64 B before c (not a hole)
    assert run["tensors_mib"] == {"inp_embd": 8.0, "a": 4.0, "b": 10.0, "c": 2048 / MiB}
    assert run["holes_mib"] == [8.0]
    assert run["compute_mib"] == 30.0001 and run["less_inp_embd_mib"] == pytest.approx(22.0001)


def test_the_committed_trace_holds_the_rounds_peaks():
    runs = R.trace_peaks((ROOT / "benchmarks" / "llamacpp_reserve" / "trace.log").read_text())
    assert set(runs) == {"q9b_65536_512", "q9b_65536_256", "q9b_65536_1024", "q122_16384_1586", "q9b_1024_512"}
    r9 = runs["q9b_65536_512"]
    assert r9["tensors_mib"]["kq-3"] == 2048.0 and r9["tensors_mib"]["Qcur_full-3"] == 16.0
    assert r9["holes_mib"] == [8.0] and r9["compute_mib"] == 2228.0157
    r122 = runs["q122_16384_1586"]
    assert r122["tensors_mib"]["inp_embd"] == 19_488_768 / MiB
    assert round(r122["less_inp_embd_mib"], 4) == 3481.8142
    assert round(r122["less_inp_embd_mib"], 2) == round(3_650_940_280 / MiB, 2) == 3481.81   # kv's card


def _rows():
    data = json.loads(R.DATA.read_text())["rows"]
    by_id = {r["id"]: r for r in data}
    return {name: by_id[rid] for name, rid in R.ROWS.items()}, [r for r in data if r.get("batch", 1) == 63]


def test_figures_are_the_differences_the_doc_states():
    rows, batch63 = _rows()
    now = R.plans(R.tree_bench(ROOT), rows, batch63)
    old = {"rows": {"p100_16k": {"compute": [3_507_984_584] * 4, "over_card": 0},
                    "attn_cpu_32k": {"compute": [6_933_633_220] * 4, "over_card": 16 * MiB}},
           "batch63_compute_median_pct": 0.27}
    f = R.figures(rows, now, old)
    assert f["round104_gap_values"] == 22_533
    assert f["attn_cpu_kv_over_values"] == 5125
    assert f["attn_cpu_kv_under_before_mib"] == pytest.approx(6717.69 - 6_933_633_220 / MiB)
    assert f["cuda0_over_16k_mib"] == pytest.approx(3895.15 - 3_650_940_280 / MiB)
    assert f["land_max_mib"] == pytest.approx(9_999_450_112 / MiB - 9536.19)
    assert f["output_card_4k_over_mib"] == pytest.approx(4024.00 - 4 * 4096 * (3072 + 248_320) / MiB)
    assert f["attn_cpu_over_card_before_mib"] == 16.0 and f["batch63_compute_median_before_pct"] == 0.27


def test_before_is_kv_at_the_rounds_baseline():
    if subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", R.BEFORE + "^{commit}"]).returncode:
        pytest.skip(f"this checkout has no commit {R.BEFORE}")
    rows, batch63 = _rows()
    old = R.before({"p100_16k": rows["p100_16k"], "fa_4k": rows["fa_4k"]}, batch63)
    assert old["rows"]["p100_16k"]["compute"] == [6344 * 552_961] * 4 == [3_507_984_584] * 4
    # before the -ub cap: the flash-attention sibling at -ub 8192 (4 x 8192 x 35,840 + 2 x 4096 x 8192 B a middle card)
    assert old["rows"]["fa_4k"]["compute"][0] == 4 * 8192 * 35_840 + 2 * 4096 * 8192 == 1_241_513_984
    assert old["batch63_compute_median_pct"] == 0.27
