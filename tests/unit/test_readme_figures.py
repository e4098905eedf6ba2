"""Every figure in the README comes from a benchmark's results file (scripts/readme_figures.py)."""
import importlib.util
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("readme_figures", REPO / "scripts" / "readme_figures.py")
figures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(figures)


def test_readme_figures_match_results():
    texts = {p: p.read_text(encoding="utf-8") for p in figures.pages()}
    stale = [p.name for p, t in figures.render_all(texts).items() if t != texts[p]]
    assert not stale, f"figures are stale in {stale}: run python scripts/readme_figures.py"


def test_pages_are_the_readme_and_the_docs():
    names = [p.relative_to(REPO).as_posix() for p in figures.pages()]
    assert names[0] == "README.md" and all(n.startswith("docs/") and n.endswith(".md") for n in names[1:])


def test_one_table_lists_the_figures_of_every_page(tmp_path, monkeypatch):
    (tmp_path / "b.json").write_text(json.dumps({"command": "python b.py", "x": 1.25, "y": 7}))
    monkeypatch.setattr(figures, "RESULTS", tmp_path)
    out = figures.render_all({"README": "<!--fig b x .1f-->0<!--/fig-->",
                              "docs": "<!--fig b y d-->0<!--/fig-->\n<!--figures-->\n<!--/figures-->"})
    assert out["README"] == "<!--fig b x .1f-->1.2<!--/fig-->"
    assert "| `b: x` | 1.2 |" in out["docs"] and "| `b: y` | 7 |" in out["docs"]


def test_readme_has_figures_and_the_docs_their_table():
    assert figures.FIG.search((REPO / "README.md").read_text(encoding="utf-8"))
    assert "<!--figures-->" in (REPO / "docs" / "figures.md").read_text(encoding="utf-8")


def test_a_changed_result_breaks_the_check(tmp_path, monkeypatch):
    (tmp_path / "b.json").write_text(json.dumps({"command": "python b.py", "x": {"y": 1.34}}))
    monkeypatch.setattr(figures, "RESULTS", tmp_path)
    text = "a <!--fig b x.y .1f-->9.9<!--/fig--> b\n<!--figures-->\n<!--/figures-->"
    out = figures.render(text)
    assert "<!--fig b x.y .1f-->1.3<!--/fig-->" in out
    assert "| `b: x.y` |" in out and "`python b.py`" in out
    assert figures.render(out) == out and out != text


def test_missing_key_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "b.json").write_text(json.dumps({"command": "c"}))
    monkeypatch.setattr(figures, "RESULTS", tmp_path)
    with pytest.raises(KeyError):
        figures.render("<!--fig b nope .1f-->1<!--/fig-->")


def test_every_results_file_names_its_command():
    for p in (REPO / "benchmarks" / "results").glob("*.json"):
        data = json.loads(p.read_text())
        assert re.match(r"(python|bash|\S*gpu-garden|COMFYUI)", data.get("command", "")), p.name


def test_byte_counts_shown_in_binary_units():
    assert figures.fmt(12237259264, "GiB") == "11.40 GiB"     # 12237259264 / 2**30 = 11.397
    assert figures.fmt(476577792, "MiB") == "454.50 MiB"
    assert figures.fmt(0.826, ".1f") == "0.8"


def test_formats_a_list_as_its_count_and_bytes_in_units():
    assert figures.fmt(["a", "b", "c"], "len") == "3"
    assert figures.fmt(3 * 2**30, "GiB") == "3.00 GiB"
    assert figures.fmt(0.0734, ".1%") == "7.3%"


def test_main_rewrites_a_stale_page_and_check_then_passes(tmp_path, monkeypatch):
    (tmp_path / "b.json").write_text(json.dumps({"command": "python b.py", "x": 2.5}))
    (tmp_path / "docs").mkdir()
    readme, page = tmp_path / "README.md", tmp_path / "docs" / "p.md"
    readme.write_text("<!--fig b x .1f-->2.5<!--/fig-->\n")
    page.write_text("<!--fig b x .1f-->0.0<!--/fig-->\n")
    for name, value in (("RESULTS", tmp_path), ("REPO", tmp_path), ("README", readme), ("DOCS", tmp_path / "docs")):
        monkeypatch.setattr(figures, name, value)
    assert figures.main(["--check"]) == 1
    assert figures.main([]) == 0 and page.read_text() == "<!--fig b x .1f-->2.5<!--/fig-->\n"
    assert figures.main(["--check"]) == 0
