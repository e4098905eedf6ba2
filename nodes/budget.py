"""VRAM Budget: a passthrough that records where memory is at the point of the graph where it runs,
shows it (the node's live bar in web/budget.js), and hands the numbers to downstream nodes.

It runs on every queue (fingerprint_inputs is always new), so a downstream verdict never reads a cached
snapshot; between runs its bar stays live through the "gpu_garden.budget" websocket event
(nodes/budget_routes.py)."""
import itertools
import time

from comfy_api.latest import io

from ..memory.budget import probe
from .budget_routes import current_snapshot
from .host_models import compute_device_name

CATEGORY = "GPU Garden"
BUDGET_TYPE = "GPU_GARDEN_BUDGET"
Budget = io.Custom(BUDGET_TYPE)
_runs = itertools.count()


class GPUGardenVRAMBudget(io.ComfyNode):
    @classmethod
    def define_schema(cls):
        return io.Schema(
            node_id="GPUGardenVRAMBudget",
            display_name="VRAM Budget",
            category=CATEGORY,
            description="Shows where GPU memory is, live, split by owner: loaded models, other PyTorch memory, "
                        "reserved but unallocated, this process outside PyTorch, other processes, free. Put it anywhere: "
                        "it passes its input through unchanged and records the memory at the moment it runs.",
            inputs=[io.AnyType.Input("value", optional=True,
                                     tooltip="anything; passed through unchanged, so this node runs right after its source")],
            outputs=[
                io.AnyType.Output("value", tooltip="the input, unchanged"),
                io.Int.Output("free_bytes", display_name="free bytes",
                              tooltip="free memory on ComfyUI's compute device when this node ran; 0 when the probe "
                                      "cannot measure it (DirectML)"),
                Budget.Output("budget", tooltip="the whole snapshot, for the Footprint Estimate node"),
            ],
            is_output_node=True,
        )

    @classmethod
    def fingerprint_inputs(cls, value=None):
        # memory moves between queues even when nothing upstream did: never reuse a cached run
        return (time.time_ns(), next(_runs))

    @classmethod
    def execute(cls, value=None) -> io.NodeOutput:
        snap = current_snapshot()
        snap["recorded"] = True  # a run's record, as opposed to the live pushes
        free = probe.free_bytes(snap, compute_device_name())
        return io.NodeOutput(value, free, snap, ui={"gpu_garden_budget": [snap]})


NODES = [GPUGardenVRAMBudget]
