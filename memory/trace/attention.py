"""Attention as the GPU would run it: which fused SDPA kernel CUDA picks (flash, then memory-efficient, else
math) and the aten call for that kernel, so the tracer accounts that kernel's own buffers."""
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

aten = torch.ops.aten
SDPA = {F.scaled_dot_product_attention, torch._C._nn.scaled_dot_product_attention}
HALF = (torch.float16, torch.bfloat16)


def math_half_reduction():
    get = getattr(torch._C, "_get_math_sdp_allow_fp16_bf16_reduction", None)
    return bool(get()) if get else False


def fused_kernel(q, k, v, mask):
    """The kernel CUDA SDPA picks first (sdp_utils.cpp order: flash, then memory-efficient)."""
    d = q.shape[-1]
    if mask is None and q.dtype in HALF and d <= 256 and d % 8 == 0 and k.shape[-1] == d and v.shape[-1] == d:
        return "flash"
    align = 8 if q.dtype in HALF else 4
    if d % align == 0 and v.shape[-1] % align == 0:
        return "efficient"
    return "math"


def run_kernel(kernel, q, k, v, mask, dropout_p, is_causal, scale, enable_gqa):
    if kernel != "math" and q.device.type == "cpu":    # tracing real CPU tensors: CPU's fused kernel
        return aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal, attn_mask=mask,
                                                                 scale=scale)[0]
    if kernel == "flash":
        if enable_gqa and k.shape[-3] != q.shape[-3]:
            k, v = _expand_gqa(q, k, v)
        return aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, False, scale=scale)[0]
    if kernel == "efficient":
        if enable_gqa and k.shape[-3] != q.shape[-3]:
            k, v = _expand_gqa(q, k, v)
        if mask is not None and mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill_(mask.logical_not(), float("-inf"))
        if mask is not None:
            mask = mask.expand(q.shape[0], q.shape[1], q.shape[-2], k.shape[-2])
        return aten._scaled_dot_product_efficient_attention(q, k, v, mask, False, dropout_p, is_causal, scale=scale)[0]
    if mask is not None and mask.dtype == torch.bool:
        mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill_(mask.logical_not(), float("-inf"))
    return aten._scaled_dot_product_attention_math(q, k, v, mask, dropout_p, is_causal, None, scale=scale,
                                                   enable_gqa=enable_gqa)[0]


def _expand_gqa(q, k, v):
    rep = q.shape[-3] // k.shape[-3]
    return k.repeat_interleave(rep, dim=-3), v.repeat_interleave(rep, dim=-3)


class AttentionMode(TorchFunctionMode):
    def __init__(self, tracer):
        super().__init__()
        self.tracer = tracer

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in SDPA:
            return self.tracer.sdpa(*args, **(kwargs or {}))
        return func(*args, **(kwargs or {}))
