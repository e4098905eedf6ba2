"""The torch side of `trace`: runs a forward on meta tensors and accounts every storage's lifetime.

Why storages: a tensor's memory is its untyped storage. Views, in-place ops and `out=` ops reuse one; every op
output whose storage we have not seen is a new allocation, and a weak reference on that storage tells us the
moment the last tensor using it dies (PyTorch keeps one Python object per storage for as long as the storage
lives, so the callback fires on the real free, not when a wrapper goes away). Meta tensors carry shapes,
dtypes and strides but no data, so nothing proportional to the model or the latent is ever allocated.

Attention is intercepted at `F.scaled_dot_product_attention` (a TorchFunctionMode) and run as the kernel the
GPU would run: flash (fp16/bf16, no mask, head dim <= 256 and a multiple of 8), else memory-efficient, else
the math path, whose decomposition materialises the n^2 scores. Every call is also measured, on a scratch
ledger, with the other kernel, so both peaks come out of one trace.

Imports torch at module import: only memory/trace.py imports this, lazily.
"""
import time
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from . import attention as attn, memo

aten = torch.ops.aten
_COPY_OPS = {aten._to_copy.default, aten.copy_.default, aten.clone.default}
_COMPOSITE = {}
# composite ops with a CUDA kernel of their own (so one op on CUDA), listed for CPU-only torch builds where no
# CUDA kernel is registered to ask about (torch 2.14: only these, besides backward ops)
_CUDA_KERNELS = {"aten::_fused_rms_norm"}
_CIA = torch._C.DispatchKey.CompositeImplicitAutograd


class _Ledger:
    __slots__ = ("live", "peak")

    def __init__(self):
        self.live = self.peak = 0


class StorageTracer(TorchDispatchMode):
    MEMO = True     # memoise meta kernels (see _meta_call)

    def __init__(self, device="meta", attention="flash"):
        super().__init__()
        self.device = torch.device(device)
        # the backend whose kernels are modelled: meta stands for CUDA
        self.backend = "CUDA" if self.device.type in ("meta", "cuda") else self.device.type.upper()
        self.attention = attention
        self.records = {}        # storage._cdata -> [alloc id, size, weakref, ledger or None]
        self.allocs = []         # alloc id -> (size, kind, op, module, shape, dtype)
        self.events = []         # alloc id, or ~alloc id for its free; main ledger only
        self.loaded_events = 0   # how many leading events load the weights (run sets it)
        self.live = self.peak = self.peak_outside_attention = 0
        self.peak_event = 0
        self.peak_at = None
        self.stack = []
        self.ops = 0
        self.scratch = None
        self.in_attention = False
        self.offloaded = {}      # storage._cdata -> size: parameters living off the device (lowvram)
        self.attn_calls = []     # (module, kernel, base, {kernel: extra}, score bytes)
        self.cache = {} if self.device.type == "meta" and self.MEMO else None
        self._attn_peak = {}     # alternative kernel -> (peak, at)

    # -- bookkeeping -------------------------------------------------------------------------------
    def register(self, tensor, kind, where="<input>"):
        """Count an existing tensor (weight, buffer, input) as live from the start."""
        if tensor.device != self.device:
            return
        st = tensor.untyped_storage()
        if st._cdata not in self.records and st.nbytes():
            self._alloc(st, tensor, kind, "<resident>", where)

    def offload(self, tensor):
        """A parameter that stays off the device: each op that reads it holds a device copy while it runs."""
        if tensor.device == self.device:
            st = tensor.untyped_storage()
            self.offloaded[st._cdata] = st.nbytes()

    def _alloc(self, st, tensor, kind, op, where):
        size = st.nbytes()
        aid = len(self.allocs)
        self.allocs.append((size, kind, op, where, tuple(tensor.shape), str(tensor.dtype).replace("torch.", "")))
        key = st._cdata
        ledger = self.scratch
        ref = weakref.ref(st, lambda _r, k=key: self._free(k))
        self.records[key] = [aid, size, ref, ledger]
        if ledger is not None:
            ledger.live += size
            ledger.peak = max(ledger.peak, ledger.live)
            return
        self.events.append(aid)
        self._grow(size, op, where)

    def _grow(self, size, op, where):
        self.live += size
        if self.live > self.peak:
            self.peak = self.live
            self.peak_event = len(self.events)
            self.peak_at = (op, where)
        if not self.in_attention and self.live > self.peak_outside_attention:
            self.peak_outside_attention = self.live

    def _free(self, key):
        rec = self.records.pop(key, None)
        if rec is None:
            return
        aid, size, _, ledger = rec
        if ledger is not None:
            ledger.live -= size
        else:
            self.live -= size
            self.events.append(~aid)

    def where(self):
        return self.stack[-1] if self.stack else "<root>"

    # -- dispatch ----------------------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        composite = _COMPOSITE.get((func, self.backend))
        if composite is None:
            has = torch._C._dispatch_has_kernel_for_dispatch_key
            own = has(func.name(), self.backend) or (self.backend == "CUDA" and func.name() in _CUDA_KERNELS)
            composite = _COMPOSITE[(func, self.backend)] = has(func.name(), "CompositeImplicitAutograd") and not own
        if composite:
            # Under inference_mode composite ops reach this mode whole; run their C++ composite kernel (what eager
            # CUDA runs: not func.decompose(), which prefers Python decompositions written for compilers) with
            # the mode on, so intermediates (the math attention's scores, matmul's copies) are seen. An op with
            # its own kernel on the modelled backend (CUDA's fused RMSNorm) stays one op, as it is there.
            with self:
                return func._op_dk(_CIA, *args, **kwargs)
        self.ops += 1
        for a in tree_leaves((args, kwargs)):
            # a device tensor made before the trace and not registered (another module's buffer, a global):
            # real memory, there all along; counted from its first use, not as a new allocation of a view
            if isinstance(a, torch.Tensor) and a.device == self.device:
                st = a.untyped_storage()
                if st._cdata not in self.records and st._cdata not in self.offloaded and st.nbytes() and \
                        self.scratch is None:
                    self._alloc(st, a, "external", "<before trace>", self.where())
        transient = 0
        if self.offloaded and func not in _COPY_OPS and not func.is_view:
            seen = set()
            for a in tree_leaves((args, kwargs)):
                if isinstance(a, torch.Tensor) and a.device == self.device:
                    key = a.untyped_storage()._cdata
                    if key in self.offloaded and key not in seen:
                        seen.add(key)
                        transient += self.offloaded[key]
            if transient:
                self._grow(transient, _op_name(func) + " (offloaded weights)", self.where())
        out = self._meta_call(func, args, kwargs) if self.cache is not None else func(*args, **kwargs)
        kind = "activation"
        if func in _COPY_OPS and args and isinstance(args[0], torch.Tensor) and args[0].device == self.device:
            src = self.records.get(args[0].untyped_storage()._cdata)
            if (src is not None and self.allocs[src[0]][1] in ("weight", "weight cast")) or \
                    args[0].untyped_storage()._cdata in self.offloaded:
                kind = "weight cast"
        op = None
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor) or t.device != self.device:
                continue
            st = t.untyped_storage()
            rec = self.records.get(st._cdata)
            if rec is None:
                if st.nbytes() and st._cdata not in self.offloaded:
                    op = op or _op_name(func)
                    self._alloc(st, t, kind, op, self.where())
            elif rec[1] != st.nbytes():          # resize_ / out= growing a storage
                delta = st.nbytes() - rec[1]
                rec[1] = st.nbytes()
                if rec[3] is None:
                    # a resize reallocates: the new block exists before the old one is freed
                    old_id = rec[0]
                    old = self.allocs[old_id]
                    aid = len(self.allocs)
                    self.allocs.append((rec[1], old[1], _op_name(func), self.where()) + old[4:])
                    rec[0] = aid
                    self.events.append(aid)
                    self._grow(rec[1], _op_name(func), self.where())
                    self.live -= old[0]
                    self.events.append(~old_id)
                else:
                    rec[3].live += delta
                    rec[3].peak = max(rec[3].peak, rec[3].live)
        if transient:       # the device copies of offloaded weights die with the op, after its outputs exist
            self.live -= transient
        return out

    def _meta_call(self, func, args, kwargs):
        """func on meta tensors, memoised on the inputs' metadata. Many meta kernels are Python (torch._refs) and
        a U-Net repeats the same shapes block after block; for an op that returns fresh tensors only, outputs
        with the recorded sizes, strides and dtypes are made directly (FakeTensorMode's dispatch cache idea)."""
        ok = memo.FUNCTIONAL.get(func)
        if ok is None:
            sch = func._schema
            ok = memo.FUNCTIONAL[func] = not func.is_view and not sch.is_mutable and \
                all(r.alias_info is None for r in sch.returns) and \
                torch.Tag.nondeterministic_seeded not in func.tags and torch.Tag.dynamic_output_shape not in func.tags
        if not ok:
            return func(*args, **kwargs)
        try:
            key = (func, memo.sig(args), memo.sig(kwargs))
            hash(key)
        except TypeError:
            return func(*args, **kwargs)
        spec = self.cache.get(key)
        if spec is None:
            out = func(*args, **kwargs)
            self.cache[key] = memo.out_spec(out, args, kwargs)
            return out
        if spec is False:
            return func(*args, **kwargs)
        return memo.make_out(spec)

    # -- attention ---------------------------------------------------------------------------------
    def sdpa(self, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
        fused = attn.fused_kernel(q, k, v, attn_mask)
        chosen = fused if self.attention == "flash" else "math"
        base = self.live
        extras = {}
        for kernel in {fused, "math"}:
            self.scratch = _Ledger()
            try:
                out = attn.run_kernel(kernel, q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
                del out
            finally:
                extras[kernel] = self.scratch.peak
                self.scratch = None
        where = self.where()
        for kernel, extra in extras.items():
            if kernel != chosen and base + extra > self._attn_peak.get(kernel, (0, None))[0]:
                self._attn_peak[kernel] = (base + extra, ("scaled_dot_product_attention[%s]" % kernel, where))
        # the math path upcasts half inputs to float32 unless reduced precision is allowed (ComfyUI allows it)
        upcast = q.dtype in attn.HALF and not attn.math_half_reduction()
        scores = q.shape[:-1].numel() * k.shape[-2] * (4 if upcast else q.element_size())
        self.attn_calls.append((where, chosen, base, extras, scores))
        self.in_attention = True
        try:
            return attn.run_kernel(chosen, q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        finally:
            self.in_attention = False

    def attention_summary(self):
        if not self.attn_calls:
            return {"calls": 0, "kernel": None, "peak": {}, "differs": False}
        kernels = {}
        for _, kernel, *_ in self.attn_calls:
            kernels[kernel] = kernels.get(kernel, 0) + 1
        chosen = max(kernels, key=kernels.get)
        peaks = {chosen: self.peak}
        at = {chosen: self.peak_at}
        alts = {kk for c in self.attn_calls for kk in c[3]} - set(kernels)
        for kernel in alts:
            p, where = self._attn_peak.get(kernel, (0, None))
            if self.peak_outside_attention >= p:
                p, where = self.peak_outside_attention, None
            peaks[kernel], at[kernel] = p, where
        fused = [kk for kk in peaks if kk != "math"]
        return {
            "calls": len(self.attn_calls), "kernel": chosen, "kernels": kernels,
            "peak": peaks, "at": {kk: _at(v) for kk, v in at.items() if v},
            "differs": len(set(peaks.values())) > 1,
            "largest_scores": max(c[4] for c in self.attn_calls),
            "fused_kernel": fused[0] if fused else None,
        }


def _at(at):
    return {"op": at[0], "module": at[1]} if at else None


def _op_name(func):
    return f"{func.namespace}.{func.overloadpacket.__name__}"      # aten.addmm, comfy_kitchen.apply_rope


def _module_hooks(tracer, names):
    from torch.nn.modules import module as mod

    def pre(m, _inp):
        tracer.stack.append(names.get(id(m)) or type(m).__name__)

    def post(m, _inp, _out):
        if tracer.stack:
            tracer.stack.pop()

    return [mod.register_module_forward_pre_hook(pre), mod.register_module_forward_hook(post, always_call=True)]


def to_device(x, device):
    """Tensors (in nested args) moved to the trace device without allocating: empty meta twins."""
    if isinstance(x, torch.Tensor):
        if x.device == device:
            return x
        return torch.empty_strided(tuple(x.shape), tuple(x.stride()), dtype=x.dtype, device=device)
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(i, device) for i in x)
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    return x


def run(fn, args=(), kwargs=None, *, module=None, weights=None, attention="flash", device="meta", offload=None,
        names=None, inference=True, top=12):
    """Trace fn(*args, **kwargs). `module`: its parameters and buffers are the resident weights (or, if
    `offload` is "all" or a set of parameter names, the ones that stay off the device)."""
    device = torch.device(device)
    kwargs = kwargs or {}
    tracer = StorageTracer(device, attention)
    names = dict(names or {})
    t0 = time.perf_counter()
    if module is not None:
        for n, m in module.named_modules(remove_duplicate=False):
            names.setdefault(id(m), n or type(module).__name__)
        if weights is None:
            weights = dict(module.named_parameters())
            weights.update(module.named_buffers())
    for n, p in (weights or {}).items():
        if offload == "all" or (offload and n in offload):
            tracer.offload(p)
        else:
            tracer.register(p, "weight", n)
    weights_bytes = tracer.live
    tracer.loaded_events = len(tracer.events)   # the weights' allocations: the allocator's state after loading
    for t in tree_leaves((args, kwargs)):
        if isinstance(t, torch.Tensor):
            tracer.register(t, "input")
    inputs_bytes = tracer.live - weights_bytes
    hooks = _module_hooks(tracer, names)
    grad = torch.inference_mode() if inference else torch.enable_grad()
    try:
        with grad, attn.AttentionMode(tracer), tracer:
            out = fn(*args, **kwargs)
    finally:
        for h in hooks:
            h.remove()
    end_live = tracer.live
    del out
    seconds = time.perf_counter() - t0
    return summarize(tracer, weights_bytes, inputs_bytes, end_live, seconds, top)


def summarize(tracer, weights_bytes, inputs_bytes, end_live, seconds, top):
    from .allocator import replay

    live = {}
    for e in tracer.events[:tracer.peak_event]:
        if e >= 0:
            live[e] = tracer.allocs[e]
        else:
            live.pop(~e, None)
    by_kind = {}
    for size, kind, *_ in live.values():
        by_kind[kind] = by_kind.get(kind, 0) + size
    # weights are listed by kind; the interesting allocations are what the forward itself holds
    biggest = sorted((a for a in live.values() if a[1] != "weight"), key=lambda a: -a[0])[:top]
    sizes = [a[0] for a in tracer.allocs]
    weights_live = by_kind.get("weight", 0)
    return {
        "peak": tracer.peak,
        "weights": weights_bytes,
        "inputs": inputs_bytes,
        "activations_peak": tracer.peak - weights_live,
        "at": _at(tracer.peak_at),
        "live_at_peak": by_kind,
        "top": [{"bytes": s, "kind": k, "op": op, "module": m, "shape": list(sh), "dtype": dt}
                for s, k, op, m, sh, dt in biggest],
        "output_live": end_live,
        "attention": tracer.attention_summary(),
        "allocator": replay(tracer.events, sizes, tracer.loaded_events),
        "ops": tracer.ops,
        "allocations": sum(1 for e in tracer.events if e >= 0),
        "seconds": round(seconds, 3),
    }
