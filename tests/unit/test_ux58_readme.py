"""README's *Estimate the open graph* paragraph against what the route answers on a --cpu host (ux58: the README
still gave 5,580,862,019 B, the figure before b0e67b56 dropped ComfyUI's CPU reserve, and said "no card tier" where
the answer and the page show the per-card-tier line)."""
from pathlib import Path

from test_webfix17 import NODE_CPU_PEAK, graph, models, on, routes  # noqa: F401 - the fixtures and the pinned node figure

README = Path(__file__).resolve().parents[2] / "README.md"


def paragraph() -> str:
    text = " ".join(README.read_text().split())
    start = text.index("On ComfyUI started with `--cpu` that is the CPU")
    return text[start:text.index("answers_as_the_node", start)]


def test_the_readme_gives_the_cpu_peak_the_route_answers(routes, monkeypatch):
    on(monkeypatch, "cpu")
    out = routes.estimate_graph({"workflow": graph()})
    assert out["peak"] == NODE_CPU_PEAK
    assert f"give the same peak, {NODE_CPU_PEAK:,} B" in paragraph()


def test_the_readme_says_the_tier_line_stays_on_a_cpu_host(routes, monkeypatch):
    on(monkeypatch, "cpu")
    out = routes.estimate_graph({"workflow": graph()})
    assert out["min_vram_gb"] is None and [t["gb"] for t in out["tiers"]] == [8, 12, 16, 24, 32, 48, 80]
    assert "no card tier" not in paragraph() and "the per-card-tier line is still given" in paragraph()
