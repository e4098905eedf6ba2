"""Ollama told to put more layers on the GPU than its estimate fits (aud68c #6, ollama/ollama#11819).

Why: Ollama's "offload" line prints what was asked (layers.requested: num_gpu from a Modelfile, a request's options or
/set parameter; -1 when nothing was asked) beside what its estimate fits (layers.offload) and what all layers need
(memory.required.full) within memory.available. A request above the estimate is placed as asked (llm/memory.go
EstimateGPULayers keeps opts.NumGPU, the runner gets --n-gpu-layers N), so where the full load is over the room the
failure that follows, whichever buffer it hits, is the forced count's: remove num_gpu, or set it at most layers.offload."""
from ..units import fmt_bytes
from .rule_row import Rule


def forced_over(x) -> bool:
    f = x.f
    req, lay, full, room = f.get("ollama_requested"), f.get("ollama_layers"), f.get("ollama_required"), f.get("ollama_available")
    return (x.env["runtime"] == "ollama" and req is not None and req >= 0 and lay is not None and req > lay[0]
            and full is not None and room is not None and full > room)


def _said(x) -> str:
    f = x.f
    return (f"num_gpu {f['ollama_requested']} was asked (layers.requested) where Ollama's estimate fits {f['ollama_layers'][0]} "
            f"of {f['ollama_layers'][1]} layers: all {f['ollama_layers'][1]} layers need {fmt_bytes(f['ollama_required'])} (memory.required.full) of "
            f"the {fmt_bytes(f['ollama_available'])} available, and the runner was started with the count asked; remove num_gpu "
            f"(Modelfile, request options, /set parameter), or set it to {f['ollama_layers'][0]} or fewer")


def params(f) -> dict:
    """The ollama-weights guide's figures where the count was forced (forced_over on the scan's facts)."""
    x = type("X", (), {"f": f, "env": {"runtime": "ollama"}})()
    if not f.get("ollama") or not forced_over(x):
        return {}
    return {"ollama_forced": True, "ollama_forced_req": str(f["ollama_requested"]), "ollama_forced_fit": str(f["ollama_layers"][0]),
            "ollama_forced_full": fmt_bytes(f["ollama_required"]), "ollama_forced_room": fmt_bytes(f["ollama_available"]),
            "ow_n1": "2", "ow_n2": "3", "ow_n3": "4"}      # the guide's other fixes after this one


# over the compute-buffer and KV-stage rows (activations 3.4, kv-cache 4.0): whichever buffer failed, the forced count did
# it; 8.0 is the table's largest weight (the buffer row keeps the runner-up: 66 % against 28 % on ollama#11819)
ROWS = [Rule("weights-exceed-vram", 8.0, forced_over, _said)]
