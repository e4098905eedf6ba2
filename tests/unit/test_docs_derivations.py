"""A worked example typed in docs/*.md (a source constant's product, a runtime's printed figure) names the test that
derives it in a comment, `tests/unit/FILE.py::TEST`; each one named must exist (review21b finding 9, task fix21c)."""
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"(tests/unit/test_\w+\.py)::(test_\w+)")


def test_every_test_a_doc_names_for_a_worked_example_exists():
    named = [(page.name, m.group(1), m.group(2)) for page in sorted((REPO / "docs").glob("*.md"))
             for m in NAMED.finditer(page.read_text(encoding="utf-8"))]
    assert any(p == "kv.md" for p, _, _ in named), "docs/kv.md's GLM-5 example names its test"
    for page, path, name in named:
        src = REPO / path
        assert src.is_file(), (page, path)
        assert re.search(rf"^def {name}\(", src.read_text(encoding="utf-8"), re.M), (page, path, name)
