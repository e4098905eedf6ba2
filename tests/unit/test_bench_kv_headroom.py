"""benchmarks/kv_headroom.py (docs/kv-accuracy.md Round 41's headroom table): the headroom of a plan, by hand."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import kv_headroom as H  # noqa: E402

GiB = 1 << 30


def test_vllm_headroom_is_the_pool_left_after_one_request():
    # a 6 GiB pool holding 3 requests of --max-model-len: 4 GiB spare after one, of a 20 GiB share
    plan = {"runtime": "vllm", "concurrency": 3.0, "kv_capacity_bytes": 6 * GiB, "budget": 20 * GiB}
    spare, share = H.headroom(plan)
    assert spare == pytest.approx(4 * GiB) and share == pytest.approx(0.2)
    assert H.headroom(dict(plan, concurrency=0.56)) is None  # below one request's pool: no figure


def test_llamacpp_headroom_is_the_fullest_cards_and_ollama_counts_every_card():
    # two 12 GiB cards judged one by one (10 and 11.5 GiB on them): the fuller card leaves 0.5 GiB; the whole-load
    # total (21.5 GiB) would give none
    plan = {"runtime": "llama.cpp", "vram": 12 * GiB, "total": 21.5 * GiB,
            "devices": [{"total": 10 * GiB}, {"total": 11.5 * GiB}]}
    spare, share = H.headroom(plan)
    assert spare == pytest.approx(0.5 * GiB) and share == pytest.approx(0.5 / 12)
    # Ollama over two 8 GiB cards: 16 GiB free against a 14 GiB placement check
    spare, share = H.headroom({"runtime": "ollama", "vram": 8 * GiB, "placement_need": 14 * GiB}, num_gpus=2)
    assert spare == pytest.approx(2 * GiB) and share == pytest.approx(0.125)


def test_lower_quartile_as_round_41_took_it():
    assert H.q25([5.0, 1.0, 3.0, 2.0, 4.0, 6.0, 7.0, 8.0]) == 3.0  # index 8 // 4 of the sorted values
    assert H.q25([0.4]) == 0.4
