"""gpu_fit_to_card.py's card: a `cap`-byte card emulated on the real one (the allocator capped and ComfyUI's free
memory shifted, or the rest held through the CUDA driver as another process holds it), none for the CPU smoke, the
allocator's peak, and the count of ComfyUI's "Ran out of memory ... retrying with tiled" decodes."""
import gc
import logging


class NoCard:
    """--cpu-smoke: no card to emulate; models are unloaded between runs."""

    def __init__(self, comfy, torch):
        self.mm, self.dev = comfy.model_management, comfy.model_management.get_torch_device()

    def set(self, cap):
        self.mm.unload_all_models()
        gc.collect()


def peak(torch, dev):
    return torch.cuda.max_memory_allocated(dev) if dev.type == "cuda" else None


class Ballast:
    """Device memory held through the CUDA driver (cuMemAlloc), outside PyTorch's allocator, as another process
    holds it: what is left is all the card has, for every reader of free memory (ComfyUI, cuDNN's workspace choice,
    the allocator backends). `hold(n)` replaces what was held; `hold(0)` releases it."""

    def __init__(self, lib=None):
        import ctypes

        self.ct = ctypes
        self.lib = lib if lib is not None else ctypes.CDLL("libcuda.so.1")
        self.lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self.lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        self.lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        self.ptr, self.size = None, 0

    def hold(self, n: int):
        ct = self.ct
        if self.ptr is not None:
            self.lib.cuMemFree_v2(self.ptr)
            self.ptr, self.size = None, 0
        if n <= 0:
            return
        ctx = ct.c_void_p()
        self.lib.cuCtxGetCurrent(ct.byref(ctx))
        if not ctx.value:  # torch's primary context is current once a CUDA call ran on this thread
            raise RuntimeError("ballast: no current CUDA context on this thread")
        ptr = ct.c_uint64()
        rc = self.lib.cuMemAlloc_v2(ct.byref(ptr), ct.c_size_t(n))
        if rc:
            raise RuntimeError(f"ballast: cuMemAlloc of {n} bytes failed (CUresult {rc})")
        self.ptr, self.size = ptr.value, n


class Card:
    """Emulates a `cap`-byte card: the allocator is capped and ComfyUI's free memory is shifted to match, or (with
    a ballast) the rest of the card is held outside PyTorch and nothing needs shifting."""

    def __init__(self, comfy, torch, ballast=None):
        self.mm, self.torch, self.ballast = comfy.model_management, torch, ballast
        self.dev = self.mm.get_torch_device()
        self.total = torch.cuda.get_device_properties(self.dev).total_memory
        self.hide = 0
        self.orig = self.mm.get_free_memory
        card = self

        def get_free_memory(dev=None, torch_free_too=False):
            r = card.orig(dev, torch_free_too)
            if dev is not None and getattr(dev, "type", str(dev)) == "cpu":
                return r
            if torch_free_too:
                return max(0, r[0] - card.hide), r[1]
            return max(0, r - card.hide)

        self.mm.get_free_memory = get_free_memory

    def set(self, cap):
        t = self.torch
        self.mm.unload_all_models()
        gc.collect()
        if self.ballast is not None:
            self.ballast.hold(0)
        self.mm.soft_empty_cache(True)
        t.cuda.synchronize(self.dev)
        free, total = t.cuda.mem_get_info(self.dev)
        outside = (total - free) - t.cuda.memory_reserved(self.dev)  # CUDA context and other processes
        hide = max(0, total - outside - cap)
        clear = getattr(t._C, "_cuda_clearCublasWorkspaces", None)
        if clear is not None:  # cuBLAS keeps its workspaces in the allocator: each run starts as the first did
            clear()
        if self.ballast is not None:
            self.ballast.hold(hide)
        else:
            self.hide = hide
            t.cuda.set_per_process_memory_fraction(min(1.0, cap / total), self.dev)
        t.cuda.reset_peak_memory_stats(self.dev)
        self.start = t.cuda.memory_allocated(self.dev)  # what an earlier run left behind (should be nothing)


class DecodeOOMs(logging.Handler):
    def __init__(self):
        super().__init__()
        self.count = 0

    def emit(self, record):
        if "Ran out of memory when regular VAE decoding" in record.getMessage():
            self.count += 1
