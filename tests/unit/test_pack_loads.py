"""The pack loads the way ComfyUI's loader loads it: by file spec, under a module name made from the
folder's full path, with ComfyUI's own top-level `nodes` module already present."""
import asyncio
import importlib.util
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STUBS = Path(__file__).parent / "stubs"


@pytest.fixture
def comfyui_like_sys_modules(monkeypatch):
    foreign_nodes = types.ModuleType("nodes")
    foreign_nodes.NODE_CLASS_MAPPINGS = {"KSampler": object}
    monkeypatch.setitem(sys.modules, "nodes", foreign_nodes)
    monkeypatch.setitem(sys.modules, "comfy", types.ModuleType("comfy"))
    monkeypatch.setitem(sys.modules, "server", types.ModuleType("server"))
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api")]:
        monkeypatch.delitem(sys.modules, k)
    yield foreign_nodes


def load_like_comfyui(module_name):
    spec = importlib.util.spec_from_file_location(module_name, REPO / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def test_loads_under_full_path_name_and_returns_nodes(comfyui_like_sys_modules):
    name = str(REPO.parent / "custom_nodes" / "comfyui-gpu-garden").replace(".", "_x_")
    try:
        module = load_like_comfyui(name)
        assert module.WEB_DIRECTORY == "./web"
        assert not hasattr(module, "NODE_CLASS_MAPPINGS"), "V3 only: ComfyUI checks NODE_CLASS_MAPPINGS first"
        ext = asyncio.run(module.comfy_entrypoint())
        nodes = asyncio.run(ext.get_node_list())
        ids = {n.define_schema().node_id for n in nodes}
        assert sys.modules["nodes"] is comfyui_like_sys_modules, "the pack must not replace ComfyUI's nodes module"
        for node in nodes:
            schema = node.define_schema()
            assert schema.category.startswith("GPU Garden"), schema.node_id
        assert ids >= set(EXPECTED_NODES) - MISSING_OK
    finally:
        for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[k]


# Every node the pack ships; grows as features land.
EXPECTED_NODES = ["GPUGardenVRAMBudget", "GPUGardenFootprintEstimate", "GPUGardenUnloadTextEncoders"]
MISSING_OK = set()


def test_outside_comfyui_registers_nothing_and_imports_nothing_heavy():
    from support.pack import run_python

    # a fresh interpreter: other tests in this session may have imported torch already
    out = run_python("import sys, gpu_garden; print(hasattr(gpu_garden, 'comfy_entrypoint'), "
                     "[k for k in ('torch', 'comfy', 'numpy') if k in sys.modules])")
    assert out.stdout.strip() == "False []", out.stderr


def test_cli_import_is_light():
    from support.pack import run_python

    out = run_python("import sys, gpu_garden.memory.cli; print([k for k in ('torch', 'pynvml', 'gguf', 'numpy') if k in sys.modules])")
    assert out.stdout.strip() == "[]", out.stderr
