"""The flight recorder's host-free core: what every run did to memory, node by node.

- `record`   the run/node record model (what a run line holds, what it never holds);
- `store`    the bounded JSONL store (last 200 runs, atomic writes) and the background writer;
- `compare`  two runs: nodes whose peak or time moved > 10 %, and what changed in between;
- `report`   "Copy memory report": redacted JSON and markdown;
- `measured` measured beats modelled: `measured_peak(runs, model_files, latent_shape, dtypes)`;
- `versions` ComfyUI, frontend, torch, driver, packs - read from files, never a subprocess;
- `watchdog` when a running node deserves a hang warning (+ guides/hang-dynamic-vram.md).

The ComfyUI side is nodes/recorder.py (hooks) and nodes/recorder_routes.py (routes)."""
from .measured import measured_peak  # noqa: F401
