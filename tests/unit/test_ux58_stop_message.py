"""Footprint Estimate's stop message (when_it_does_not_fit: stop) named the first three knobs as "What would fit"
whether or not they fit (ux58, SD1.5 512x512 on vram_gb 1 in the real host: "more than ComfyUI can offload ... What
would fit: partial offload ... (-2.81 GiB); GGUF Q4_K ..." though none fits 1 GiB alone; the face marks only the
ones that do with "✓ fits")."""
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import formula as E
from gpu_garden.memory.estimate import layouts
from gpu_garden.memory.units import GiB


@pytest.fixture
def node(monkeypatch):
    from support.fit_stubs import fresh_node
    return fresh_node(monkeypatch, Path(__file__).parent / "stubs", "estimate")


def sd15(budget_gib):
    t = layouts.table("sd15_v1-5-pruned-emaonly-fp16")
    return E.judge(E.estimate([{"table": t, "role": "diffusion_model", "source": "MODEL"}], 512, 512, cfg=None),
                   int(budget_gib * GiB))


def test_no_knob_that_fits_is_not_called_what_would_fit(node):
    est = sd15(1)
    assert est["outcome"]["status"] == "does not fit" and not any(k.get("fits") for k in est["knobs"])
    msg = node.stop_message(est)
    assert "What would fit" not in msg
    assert "No single change fits it; the largest savings: partial offload of the diffusion model" in msg


def test_only_the_knobs_that_fit_are_named_what_would_fit(node):
    est = sd15(2)  # partial offload and GGUF Q4_K fit 2 GiB alone; fp8 and Q8_0 do not
    fits = [k["label"] for k in est["knobs"] if k.get("fits")]
    assert len(fits) == 2
    msg = node.stop_message(est)
    named = msg.split("What would fit: ", 1)[1]
    assert all(f in named for f in fits) and "fp8" not in named and "Q8_0" not in named
