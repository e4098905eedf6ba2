"""Test-only ComfyUI nodes, linked into the host by the test harness only (never shipped).
GGTestRaiseOOM raises an allocation failure with a realistic message, so an OOM is deterministic on CPU."""
import torch

from .report_node import ReportAfter

# Messages as the runtimes print them (numbers from public reports; see tests/unit/corpus for sources).
MESSAGES = {
    "cuda_caching": ("oom", "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 8.00 GiB of which "
                     "312.00 MiB is free. Including non-PyTorch memory, this process has 7.20 GiB memory in use. Of the "
                     "allocated memory 5.80 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated. "
                     "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
                     "to avoid fragmentation.  See documentation for Memory Management  "
                     "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"),
    "cuda_async": ("oom", "Allocation on device 0 would exceed allowed memory. (out of memory)\nCurrently allocated     : 9.71 GiB\n"
                   "Requested               : 2.50 GiB\nDevice limit            : 11.99 GiB\nFree (according to CUDA): 0 bytes\n"
                   "PyTorch limit (set by user-supplied memory fraction)\n                        : 17179869184.00 GiB"),
    "mps": ("runtime", "MPS backend out of memory (MPS allocated: 17.80 GB, other allocations: 1.23 GB, max allowed: 18.13 GB). "
                       "Tried to allocate 1.00 GB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit "
                       "for memory allocations (may cause system failure)."),
    "cpu": ("runtime", "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to "
                       "allocate 40000000000000 bytes. Error code 12 (Cannot allocate memory)"),
    "not_oom": ("runtime", "mat1 and mat2 shapes cannot be multiplied (77x768 and 1024x320)"),
}


class GGTestRaiseOOM:
    CATEGORY = "GPU Garden/testing"
    RETURN_TYPES = ("LATENT",)
    FUNCTION = "run"

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"samples": ("LATENT",), "kind": (list(MESSAGES),), "extra": ("STRING", {"default": ""})}}

    def run(self, samples, kind, extra):
        exc_kind, msg = MESSAGES[kind]
        msg = msg + extra
        raise torch.OutOfMemoryError(msg) if exc_kind == "oom" else RuntimeError(msg)


NODE_CLASS_MAPPINGS = {"GGTestRaiseOOM": GGTestRaiseOOM}
NODE_DISPLAY_NAME_MAPPINGS = {"GGTestRaiseOOM": "GG Test: raise OOM"}


class GGTestLoadedModels(ReportAfter):
    """Reports comfy.model_management.current_loaded_models at the point the graph reaches it (after `anything`)."""

    def run(self, anything):
        import comfy.model_management as mm

        out = []
        for lm in mm.current_loaded_models:
            p = lm.model
            if p is not None:
                out.append({"name": type(p.model).__name__, "is_clip": bool(getattr(p, "is_clip", False)),
                            "bytes": int(lm.model_loaded_memory()), "device": str(lm.device)})
        return {"ui": {"loaded_models": out}}


NODE_CLASS_MAPPINGS["GGTestLoadedModels"] = GGTestLoadedModels
NODE_DISPLAY_NAME_MAPPINGS["GGTestLoadedModels"] = "GG Test: loaded models"

from .fit_probe import NODE_CLASS_MAPPINGS as _FIT, NODE_DISPLAY_NAME_MAPPINGS as _FIT_NAMES  # noqa: E402
NODE_CLASS_MAPPINGS.update(_FIT), NODE_DISPLAY_NAME_MAPPINGS.update(_FIT_NAMES)
