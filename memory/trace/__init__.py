"""Exact activation peaks from a forward on meta tensors. `tracer.trace()` is the entry; `dispatch` records ops (private torch
APIs, imported only when a trace runs); `allocator` replays them through a caching-allocator model; `comfy_checkout` is the only
module that loads a user-given ComfyUI checkout, lazily; `comfy_recipes` holds the per-family recipes it builds from."""
