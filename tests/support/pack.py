"""Loads this checkout as the package `gpu_garden` (the name `pip install .` gives it), in this process or
at the start of a fresh interpreter, without installing anything."""
import importlib.util
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BOOT = ("import importlib.util, sys; _s = importlib.util.spec_from_file_location('gpu_garden', %r, "
        "submodule_search_locations=[%r]); _m = importlib.util.module_from_spec(_s); sys.modules['gpu_garden'] = _m; "
        "_s.loader.exec_module(_m)\n") % (str(REPO / "__init__.py"), str(REPO))


def load_pack():
    mod = sys.modules.get("gpu_garden")
    if mod is not None and Path(mod.__file__).resolve().parent == REPO:
        return mod
    spec = importlib.util.spec_from_file_location("gpu_garden", REPO / "__init__.py", submodule_search_locations=[str(REPO)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_garden"] = mod
    spec.loader.exec_module(mod)
    return mod


def run_python(code: str, python: str = sys.executable, **kwargs) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter that has this checkout importable as gpu_garden."""
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 300)
    return subprocess.run([python, "-c", BOOT + code], **kwargs)


def host_json(code: str, *args: str):
    """Run `code` with ComfyUI's interpreter (COMFYUI_PYTHON) on the checkout (sys.argv[1]: COMFYUI_DIR, then args); it
    must exit 0 and print its answer as JSON on its last stdout line."""
    import json
    import os
    p = subprocess.run([os.environ["COMFYUI_PYTHON"], "-c", BOOT + code, os.environ["COMFYUI_DIR"], *args],
                       capture_output=True, text=True, timeout=600, cwd=str(REPO))
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def load_benchmark(name: str):
    """benchmarks/<name>.py as a module (the benchmarks are scripts, not a package), loaded afresh each call."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
