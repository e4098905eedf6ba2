"""(fix67b, aud67b #9) ComfyUI's own pinning of host memory on the failing stack (issue 14, class 8).

ComfyUI's comfy/model_management.py pin_memory() page-locks a CPU weight in place with
`torch.cuda.cudart().cudaHostRegister(ptr, size, 1)` (ComfyUI 0.8.0: model_management.py:1139-1175, the call at :1167),
up to MAX_PINNED_MEMORY, 45 % of system RAM on Windows and 95 % elsewhere (:1116-1125, logged as "Enabled pinned memory N").
It pins the offloaded part of a model (a partial load, lowvram) so its moves to the card are fast. cudaHostRegister works
on host RAM, not the card: a CUDA out of memory raised from that frame (0.3.x raised it there; 0.8.0 logs "Pin error." and
discards the error, which a later call can still report) is page-locked system RAM running out, the pinned-host reading
(rules_host) as a non-blocking block swap is."""


def pinned(frames):
    """The pinned-host words where ComfyUI's pin_memory() is on the stack, else None."""
    for path, func in frames or ():
        if func == "pin_memory" and path.replace("\\", "/").endswith("comfy/model_management.py"):
            return "ComfyUI's pin_memory() (cudaHostRegister page-locks host RAM)"
    return None
