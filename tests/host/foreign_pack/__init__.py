"""Test-only custom node pack standing in for another pack that hooks ComfyUI carelessly (never shipped).
The harness links it into a custom_nodes folder listed first (extra_model_paths.yaml, is_default), so
ComfyUI loads it BEFORE GPU Garden, as filesystem order may do for real users.

- It wraps execution.execute with a plain (*args, **kwargs) wrapper and no functools.wraps, so the
  wrapper below it has no parameter names to bind.
- With GG_TEST_HOOK_BREAK=1 it also does what ComfyUI's hook breaker (hook_breaker_ac10a0.py) would do
  if it listed execution.execute and unload_all_models: it adds them to SAVED_FUNCTIONS, so ComfyUI
  restores them (removing any wrapper added later) right after all custom nodes loaded and after prompts.
"""
import logging
import os
import sys

import execution

log = logging.getLogger(__name__)
_inner = execution.execute
_calls = {"n": 0}


async def _foreign_execute(*args, **kwargs):
    _calls["n"] += 1
    if _calls["n"] == 1:
        logging.info("[GG foreign pack] execute wrapper called")
    return await _inner(*args, **kwargs)


execution.execute = _foreign_execute
logging.info("[GG foreign pack] loaded before GPU Garden: %s",
             not any("gpu-garden" in k or "gpu_garden" in k for k in sys.modules))

if os.environ.get("GG_TEST_HOOK_BREAK") == "1":
    import comfy.model_management as mm
    import hook_breaker_ac10a0

    hook_breaker_ac10a0.SAVED_FUNCTIONS.append((execution, "execute", execution.execute))
    hook_breaker_ac10a0.SAVED_FUNCTIONS.append((mm, "unload_all_models", mm.unload_all_models))
    logging.info("[GG foreign pack] hook breaker now restores execution.execute and unload_all_models")

NODE_CLASS_MAPPINGS = {}
