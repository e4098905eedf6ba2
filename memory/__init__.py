"""GPU Garden's core: one subpackage per capability. Nothing here imports ComfyUI at module level; the
one module that loads a user-given ComfyUI checkout (`trace/comfy_checkout.py`) does it inside functions.

- `budget/`   live memory per device, split by owner. `budget.probe.snapshot()` returns the sample and
              `Snapshot.to_json()` is what the routes and the websocket push.
- `estimate/` footprint per phase from file headers: `headers` (safetensors/GGUF readers), `families`
              (the one table of family ids and ComfyUI config classes), `layouts` (bundled real layouts),
              `formula` (the activations of each phase: `formula.estimate()` and its `_phase_*` helpers).
- `trace/`    exact activation peaks by running a model's forward on meta tensors (`tracer.trace`).
- `triage/`   OOM logs to a cause: `scan` (stream) -> `case` (facts) -> `rules` (the table where a cause is
              decided) -> `rank` -> `guides` (markdown under `triage/guides/`) -> `render`; `engine` ties them.
- `llm/`      LLM memory: `spec` (model specs from config/GGUF), `kv` (weights, KV cache, fits verdict).
- `unload/`   the measured report of the Unload Text Encoders node.
- `units`, `errors`, `filelock` (the cross-process lock of the stores): shared by all.

`cli.py` maps each `gpu-garden` command to its capability's `run_cli`.
"""
