"""The stop error's name in ComfyUI's error dialog (ux58: the real --cpu host's history gave exception_type
"/tmp/ux58_base/custom_nodes/comfyui-gpu-garden.nodes.estimate.FootprintDoesNotFit", the user's folder in an error
they may paste into an issue). ComfyUI's execution.full_type_name is module + "." + qualname; the pack is loaded
under its folder's full path, as test_pack_loads loads it."""
import asyncio
import sys

from test_pack_loads import REPO, comfyui_like_sys_modules, load_like_comfyui  # noqa: F401 - the fixture


def full_type_name(klass):  # ComfyUI 0.8.0 execution.py
    module = klass.__module__
    return klass.__qualname__ if module == "builtins" else module + "." + klass.__qualname__


def test_the_stop_error_is_named_without_the_pack_folder(comfyui_like_sys_modules):
    name = str(REPO.parent / "custom_nodes" / "comfyui-gpu-garden").replace(".", "_x_")
    try:
        module = load_like_comfyui(name)
        asyncio.run(asyncio.run(module.comfy_entrypoint()).get_node_list())
        est = sys.modules[name + ".nodes.estimate"]
        assert full_type_name(est.FootprintDoesNotFit) == "gpu_garden.FootprintDoesNotFit"
        assert isinstance(est.FootprintDoesNotFit("x"), Exception)
    finally:
        for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[k]
