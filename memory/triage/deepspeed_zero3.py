"""DeepSpeed ZeRO-3 gathering parameters (aud68c #9: Lightning-AI/pytorch-lightning#18134, deepspeedai/DeepSpeed#2899).

Why: under ZeRO stage 3 each GPU holds a shard of the parameters and gathers the full ones of the next modules before
their forward (deepspeed/runtime/zero/partitioned_param_coordinator.py fetch_sub_module -> __all_gather_params ->
partition_parameters.py all_gather_coalesced). An out-of-memory raised there is the gathered parameters on top of the
step's tensors: their room is set by stage3_max_live_parameters (default 1e9 elements), stage3_prefetch_bucket_size
(5e7) and stage3_param_persistence_threshold (1e5), the names of deepspeed/runtime/zero/config.py's fields' aliases.
A row and its guide (deepspeed-zero3.md, kind deepspeed.zero3_gather). The row names the frame but moves no cause:
at first it added 4.0 to weights-exceed-vram, and two tuned corpus cases with this frame labelled activations (batch-192's
ms-swift GRPO, batch-295's NPU fine-tune: a smaller batch fixed both) turned wrong (ledger at 8c41f94d: current 1386 ->
1384); the guide follows either cause."""
from .rule_row import Rule

FRAMES = ("fetch_sub_module", "all_gather_coalesced", "__all_gather_params", "_all_gather_params")
KIND = "deepspeed.zero3_gather"


def gathering(frames) -> str | None:
    """The ZeRO-3 gathering frame the traceback passes through (its function name), else None. By name only:
    partition_parameters.py also holds zero.Init's wrapper and _post_init_method, model construction (rev68f #2)."""
    for _path, fn in reversed(frames or []):
        if fn in FRAMES:
            return fn
    return None


def _row(x) -> bool:
    return gathering(x.frames) is not None


def _said(x) -> str:
    return (f"traceback: DeepSpeed ZeRO-3 gathering parameters ({gathering(x.frames)}()): the next modules' full parameters "
            "on top of the step's tensors; lower stage3_max_live_parameters and stage3_prefetch_bucket_size in the ZeRO "
            "config, or a smaller batch")


ROWS = [Rule("activations", 0.5, _row, _said)]


def guide_kind(top, x_kind, frames):
    """The event kind whose guide the reading takes (deepspeed-zero3.md), else x_kind."""
    return KIND if top in ("weights-exceed-vram", "activations") and gathering(frames) else x_kind
