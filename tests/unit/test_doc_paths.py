"""The module paths the docs name are the tree's (mend60). Every `memory/...py` path in docs/*.md and README.md exists,
but for an explicit list of historical names, each allowed only where its line says it moved; and a function or table
named by its old module after mend58's splits (names.py -> name_quant.py, runtimes/vllm.py -> vllm_mla.py, plan.py ->
plan_answer.py, cache.py -> vllm_max_len.py: bodies moved verbatim) is followed, in its sentence, by where it is now."""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]
PATH = re.compile(r"(?<![\w/.-])memory/[\w/]+\.py\b")
# a path that no longer exists, kept in a dated record: allowed only on a line that says where it went
HISTORICAL = {}  # "memory/x/old.py": "now memory/x/new.py" (none today)
# mend58's splits: old module (as the docs name it) -> the module the moved names are in now
SPLITS = {"names": "memory/llm/name_quant.py", "vllm": "memory/llm/runtimes/vllm_mla.py",
          "plan": "memory/llm/plan_answer.py", "cache": "memory/llm/vllm_max_len.py"}


def missing_paths(text: str) -> list:
    """(line number, path) of each memory/...py path in text that is not in the tree, unless HISTORICAL allows it
    there (its line carries the move)."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        for p in PATH.findall(line):
            if not (ROOT / p).is_file() and not (p in HISTORICAL and HISTORICAL[p] in line):
                out.append((i, p))
    return out


def top_names(path: Path) -> set:
    """The functions, classes and assigned names at a module's top level."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def stale_moves(text: str) -> list:
    """(line number, reference) of each `old.NAME` / `old.py NAME` for a name mend58 moved out of `old`, when the rest
    of its sentence (to the next '.' followed by a space, or 200 characters) does not name the new module."""
    out = []
    flat = text.replace("\n", " ")
    for old, new in SPLITS.items():
        stem = Path(new).stem
        for name in top_names(ROOT / new):
            for m in re.finditer(rf"(?<![\w/]){old}(?:\.py'?s?\s+`?|\.){re.escape(name)}\b", flat):
                rest = flat[m.end():m.end() + 200].split(". ")[0]
                if stem not in rest:
                    out.append((text.count("\n", 0, m.start()) + 1, m.group(0)))  # flat keeps text's offsets
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_memory_path_named_exists(doc):
    assert not missing_paths(doc.read_text()), doc.name


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_a_name_moved_by_mend58_says_where_it_is_now(doc):
    assert not stale_moves(doc.read_text()), doc.name


def test_the_checks_fail_on_a_made_up_path_and_an_unmarked_move(monkeypatch):
    assert missing_paths("see memory/llm/cache.py and\nmemory/llm/no_such_module.py (made up)") == [
        (2, "memory/llm/no_such_module.py")]
    monkeypatch.setitem(HISTORICAL, "memory/llm/old_split.py", "now memory/llm/name_quant.py")
    assert missing_paths("memory/llm/old_split.py (now memory/llm/name_quant.py)") == []
    assert missing_paths("memory/llm/old_split.py holds it") == [(1, "memory/llm/old_split.py")]
    assert stale_moves("`names.NAME_WIDTHS` sizes it. Next.") == [(1, "names.NAME_WIDTHS")]
    assert stale_moves("`names.NAME_WIDTHS` (since mend58 `name_quant.NAME_WIDTHS`) sizes it.") == []
    assert stale_moves("plan.py _vllm_kv_refusal returns first") == [(1, "plan.py _vllm_kv_refusal")]
    assert stale_moves("names.resolve stays") == []  # not moved
