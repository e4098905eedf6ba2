"""GPU Garden: keeps a GPU's memory in view and turns an out-of-memory crash into a fix.

ComfyUI loads this folder as a custom node pack (module name = the folder's full path, so every
import below is relative). Outside ComfyUI the same package is `gpu_garden` (the CLI).
Nothing here may stop ComfyUI from starting: node registration failures are logged, not raised.
"""
import logging
import sys

WEB_DIRECTORY = "./web"
__version__ = "0.1.0"

log = logging.getLogger("gpu_garden")


def _inside_comfyui() -> bool:
    # ComfyUI imports its own `comfy` package and `server` module before it loads any pack.
    return "comfy" in sys.modules and "server" in sys.modules


if _inside_comfyui():
    # One mechanism per host: V3 (`comfy_entrypoint`) where `comfy_api.latest` exists. ComfyUI's
    # loader checks NODE_CLASS_MAPPINGS first, so it is deliberately never defined alongside.
    try:
        from .nodes import comfy_entrypoint, setup_server  # noqa: F401
    except Exception as exc:  # an old host or a broken optional dependency
        log.warning("[GPU Garden] nodes not registered: %s", exc)
    else:
        try:
            setup_server()
        except Exception:
            log.exception("[GPU Garden] server hooks not installed")
