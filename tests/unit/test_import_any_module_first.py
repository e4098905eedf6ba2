"""Every module under memory/ imports on its own, first, in a clean interpreter: a cycle between two modules
(llm/gguf.py and llm/spec.py re-exporting it) only shows when the one that is imported second elsewhere comes
first. One interpreter; the pack's modules are dropped from sys.modules between imports."""
import json

from support.pack import BOOT, REPO, run_python

MODULES = sorted("gpu_garden." + ".".join(p.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
                 for p in (REPO / "memory").rglob("*.py"))


def test_every_memory_module_imports_first():
    code = BOOT + f"""
import importlib, json, sys, traceback
boot = {{k: v for k, v in sys.modules.items() if k == 'gpu_garden'}}
failed = {{}}
for name in {MODULES!r}:
    for k in [k for k in sys.modules if k.startswith('gpu_garden.')]:
        del sys.modules[k]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{{type(exc).__name__}}: {{exc}}"
print(json.dumps(failed))
"""
    r = run_python(code)
    assert r.returncode == 0, r.stderr[-2000:]
    assert len(MODULES) > 50
    assert json.loads(r.stdout.strip().splitlines()[-1]) == {}
