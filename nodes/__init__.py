"""ComfyUI adapters. Each node module exports NODES (V3 io.ComfyNode classes); each server module
exports setup() (routes, events, hooks), run once when ComfyUI loads the pack. A module that fails to
import (an optional dependency, an older host) disables only its own feature, with a logged reason."""
import importlib
import logging

log = logging.getLogger("gpu_garden")

NODE_MODULES = ("budget", "estimate", "unload", "fit_to_card")
SERVER_MODULES = ("health", "budget_routes", "oom_capture", "auto_unload", "recorder", "recorder_routes", "estimate_routes", "fit_guard")
CATEGORY = "GPU Garden"


def _import(name):
    try:
        return importlib.import_module("." + name, __package__)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.endswith("." + name):
            return None  # feature not built into this version
        log.warning("[GPU Garden] %s disabled: %s", name, exc)
        _health_fail(name, exc)
    except Exception as exc:
        log.warning("[GPU Garden] %s disabled: %s: %s", name, type(exc).__name__, exc)
        _health_fail(name, exc)
    return None


def _health_fail(name, exc):
    try:
        from . import health
        health.register(name).uninstalled(exc)  # GET /gpu_garden/health names the module that did not load
    except Exception:
        pass


def node_list() -> list:
    nodes = []
    for name in NODE_MODULES:
        mod = _import(name)
        if mod is not None:
            nodes.extend(getattr(mod, "NODES", ()))
    return nodes


def host_supported() -> bool:
    """A ComfyUI with the V3 extension API (comfy_api.latest.ComfyExtension, August 2025): the hosts that register
    the nodes. An older one gets no hooks either: they assume its async execution and its loader's signatures, and
    on such a host they would break every prompt while the pack shows no node."""
    try:
        from comfy_api.latest import ComfyExtension  # noqa: F401
    except Exception:
        return False
    return True


def setup_server() -> None:
    if not host_supported():
        log.warning("[GPU Garden] this ComfyUI has no V3 extension API (comfy_api.latest): the pack registers no "
                    "node and installs no hook; update ComfyUI to use it")
        return
    for name in SERVER_MODULES:
        mod = _import(name)
        if mod is not None and hasattr(mod, "setup"):
            try:
                mod.setup()
            except Exception:
                log.exception("[GPU Garden] %s setup failed", name)


def _extension_class():
    from comfy_api.latest import ComfyExtension

    class GPUGardenExtension(ComfyExtension):
        async def get_node_list(self):
            return node_list()

    return GPUGardenExtension


async def comfy_entrypoint():
    return _extension_class()()
