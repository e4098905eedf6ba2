"""Memoised meta kernels for the storage tracer: an op's output is rebuilt from metadata when the same
functional op meets inputs of the same shapes, strides and dtypes again (a DiT runs one block N times)."""
import torch
from torch.utils._pytree import tree_leaves

FUNCTIONAL = {}


def sig(x):
    if isinstance(x, torch.Tensor):
        return (x.dtype, x.device, tuple(x.shape), x.stride(), x.storage_offset(), x.is_inference())
    if isinstance(x, (list, tuple)):
        return tuple(sig(i) for i in x)
    if isinstance(x, dict):
        return tuple((k, sig(v)) for k, v in sorted(x.items()))
    if isinstance(x, (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout,
                      torch.memory_format)):
        return (type(x), x)
    raise TypeError("not memoisable")


def out_spec(out, args, kwargs):
    """How to rebuild `out` from metadata, or False when it cannot be (aliases an input, shares storage...)."""
    inputs = {t.untyped_storage()._cdata for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
    seen = set()

    def one(t):
        if not isinstance(t, torch.Tensor):
            if isinstance(t, (list, tuple)):
                return (type(t), [one(i) for i in t])
            if t is None or isinstance(t, (int, float, bool)):
                return ("value", t)
            raise TypeError
        st = t.untyped_storage()
        if st._cdata in inputs or st._cdata in seen or not t.is_meta or t.element_size() == 0 or \
                st.nbytes() % t.element_size():
            raise TypeError
        seen.add(st._cdata)
        return ("tensor", t.dtype, tuple(t.shape), t.stride(), t.storage_offset(), st.nbytes() // t.element_size())
    try:
        return one(out)
    except TypeError:
        return False


def make_out(spec):
    kind = spec[0]
    if kind == "value":
        return spec[1]
    if kind == "tensor":
        _, dtype, shape, stride, offset, numel = spec
        base = torch.empty(numel, dtype=dtype, device="meta")
        return base.as_strided(shape, stride, offset)
    return kind([make_out(i) for i in spec[1]])     # list, tuple or a torch.return_types structseq
