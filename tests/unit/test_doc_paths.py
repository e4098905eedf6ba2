"""The module paths the docs name are the tree's (mend60). Every `memory/...py` path in docs/*.md and README.md exists,
but for an explicit list of historical names, each allowed only where its line says it moved; and a function or table
named by its old module after mend58's splits (names.py -> name_quant.py, runtimes/vllm.py -> vllm_mla.py, plan.py ->
plan_answer.py, cache.py -> vllm_max_len.py: bodies moved verbatim) is followed, in its sentence, by where it is now.
A constant or private name a doc names by its module (`module.NAME`, `module.py NAME`: NAME upper-case or _private) is
in that module, or its sentence says where it is now (mend61)."""
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


def defined(path: Path) -> set:
    """Every name bound at a module's top level, inside its if / try blocks too, imports included (a re-export is
    there: `weights.py` re-exports linear_quant's names)."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        for sub in ast.walk(node) if isinstance(node, (ast.If, ast.Try)) else [node]:
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(sub.name)
            elif isinstance(sub, (ast.Assign, ast.AnnAssign)):
                out |= {n.id for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])
                        for n in ast.walk(t) if isinstance(n, ast.Name)}
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                out |= {(a.asname or a.name).split(".")[0] for a in sub.names}
    return out


# memory/'s modules by stem (a stem two packages share, plan, report, spec, ...: the union of their names)
MODULES = {}
for _p in sorted((ROOT / "memory").rglob("*.py")):
    if _p.name != "__init__.py":
        MODULES.setdefault(_p.stem, set()).update(defined(_p))
_STEMS = "|".join(sorted(MODULES, key=len, reverse=True))
NAME = r"(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_?|_\w+)"  # a constant (WAN_ENCODE_* a prefix) or a private name
REF = re.compile(rf"(?<![\w/.-])({_STEMS})(?:\.|\.py\s+`?)({NAME})\b")
# `module.NAME` text that is not one of our modules' names, by document: what it is instead
NOT_OURS = {("triage-accuracy.md", "vae._blend"): "a quoted diffusers call chain (parallel_vae.py -> vae._blend)"}


def stale_names(text: str, doc: str = "") -> list:
    """(line number, reference) of each `module.NAME` / `module.py NAME` whose module (by stem) has no such name, unless
    the rest of its sentence (as stale_moves reads it) says "now in memory/..." or names the module that has it."""
    out = []
    flat = text.replace("\n", " ")
    for m in REF.finditer(flat):
        stem, name = m.groups()
        names = MODULES[stem]
        if name in names or (name.endswith("_") and any(n.startswith(name) for n in names)) or (doc, m.group(0)) in NOT_OURS:
            continue
        rest = flat[m.end():m.end() + 200].split(". ")[0]
        if "now in memory/" in rest or any(f"{s}.{name}" in rest for s, ns in MODULES.items() if name in ns):
            continue
        out.append((text.count("\n", 0, m.start()) + 1, m.group(0)))
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


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_a_constant_named_by_its_module_is_there(doc):
    assert not stale_names(doc.read_text(), doc.name), doc.name


def test_the_name_check_fails_on_a_gone_or_made_up_name():
    assert stale_names("gated by llamacpp_noflash.QWEN35_ARCHS (both spellings), now") == [
        (1, "llamacpp_noflash.QWEN35_ARCHS")]
    assert stale_names("refused\n(plan_checks.py DATA_PARALLEL_UNMODELLED); 1 is accepted") == [
        (2, "plan_checks.py DATA_PARALLEL_UNMODELLED")]
    assert stale_names("joined (scan._WRAPPABLE). Next") == [(1, "scan._WRAPPABLE")]
    assert stale_names("joined (scan._WRAPPABLE; now in memory/triage/wrapped.py WRAPPABLE). Next") == []
    assert stale_names("`names.NAME_WIDTHS` (since mend58 `name_quant.NAME_WIDTHS`) sizes it.") == []
    assert stale_names("gated by llamacpp_noflash.GATED_ATTN_ARCHS and vae.WAN_ENCODE_* and weights.linear_bits") == []
    assert stale_names("vae.NO_SUCH_TABLE_ and vae._no_such") == [(1, "vae.NO_SUCH_TABLE_"), (1, "vae._no_such")]
    assert stale_names("a chain -> vae._blend") == [(1, "vae._blend")]  # allowed in triage-accuracy.md only


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
