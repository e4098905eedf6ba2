"""memory/llm stays in modules under 600 lines, as memory/triage does (test_triage_fix19a): plan.py had grown to 612
lines; its verdict step (_sizes_only, _search and what they call) moved to plan_verdict.py, bodies verbatim."""
from pathlib import Path


def test_llm_modules_stay_under_600_lines():
    from gpu_garden.memory import llm
    pack = Path(llm.__file__).parent
    long = {str(p.relative_to(pack)): n for p in sorted(pack.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= 600}
    assert long == {}, long


def test_plan_verdict_split_keeps_the_names():
    from gpu_garden.memory.llm import plan as P, plan_verdict as PV
    assert (P._search, P._sizes_only) == (PV._search, PV._sizes_only)
    assert not any(v is P for v in vars(PV).values())  # plan_verdict.py does not import plan.py: no cycle
