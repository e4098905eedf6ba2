"""README's overview of `memory/llm/` (its **LLM** paragraph and the list under it) names every module of the package,
runtimes/ included, as `name.py` / `runtimes/name.py` (mend61: name_quant.py, runtimes/vllm_mla.py, plan_answer.py,
vllm_max_len.py and 32 more were missing). A new module fails here until the README says what it holds."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LLM = ROOT / "memory" / "llm"


def llm_section(readme: str) -> str:
    """From '**LLM** (`memory/llm/`)' to the next bold paragraph head ('\\n\\n**')."""
    start = readme.index("**LLM** (`memory/llm/`)")
    end = readme.find("\n\n**", start)
    return readme[start:end if end > 0 else None]


def unnamed(section: str) -> list:
    """The package's modules (but __init__.py) that `section` does not name in backticks."""
    mods = sorted(p.relative_to(LLM).as_posix() for p in LLM.rglob("*.py") if p.name != "__init__.py")
    return [m for m in mods if f"`{m}`" not in section]


def test_the_readme_names_every_memory_llm_module():
    assert unnamed(llm_section((ROOT / "README.md").read_text())) == []


def test_the_check_sees_a_module_left_out():
    section = llm_section((ROOT / "README.md").read_text())
    assert unnamed(section.replace("`runtimes/vllm_mla.py`", "vllm_mla")) == ["runtimes/vllm_mla.py"]
    assert "**Unload**" not in section and "`kv.py`" in section
