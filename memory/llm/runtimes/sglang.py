"""SGLang (python -m sglang.launch_server): one static KV pool sized at start-up, as model_runner.py computes it
(sglang/srt/model_executor/model_runner.py, 0.4.x):

  free0  = the GPU's free memory once torch.distributed is up (init_torch_distributed's min_per_gpu_memory; the
           log's "Load weight begin. avail mem=..."): the card less the CUDA context and, with TP, NCCL's buffers
           ("Init torch distributed ends. mem usage=0.13 GB" at TP 4)
  rest   = free after the weights - free0 x (1 - mem_fraction_static)          (profile_max_num_token)
  tokens = rest / cell, cell = one token's K and V over the layers on this GPU (MHATokenToKVPool), or its MLA
           latent (MLATokenToKVPool): "KV Cache is allocated. #tokens: N, K size: ..., V size: ...", and
           max_total_num_tokens
  so tokens = (mem_fraction_static x free0 - weights) / cell; free0 x (1 - mem_fraction_static) is left for CUDA
  graphs and activations. SGLang refuses to start when rest <= 0 ("Not enough memory. Please try to increase
  --mem-fraction-static"); otherwise it starts and caps a request's input at the pool (TpModelWorker:
  max_req_input_len = min(context_len - 1, max_total_num_tokens - 1)), which the notes say.
  mem_fraction_static default (server_args.py, 0.4.x): 0.88 on one GPU, 0.87 at TP 2, 0.85 at TP 4, 0.81 at TP 8,
  0.79 from TP 16. SGLang's "GB" in these lines is GiB (bytes / 2**30)."""
import math

from ...units import GiB, MiB
from ..cache import kv_cache

CUDA_CONTEXT = 512 * MiB      # as vLLM's: the PyTorch context before anything is loaded
NCCL = int(0.13 * GiB)        # "Init torch distributed ends. mem usage=0.13 GB" (TP 4, didier-durand/llms-in-clouds)
DEFAULT_MFS = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87), (1, 0.88))
KV = ("f16", "bf16", "fp8_e5m2", "fp8_e4m3")


def default_mfs(tp: int) -> float:
    return next(f for n, f in DEFAULT_MFS if tp >= n)


def cell_bytes(spec, kv: str) -> int:
    """Bytes one token takes in SGLang's pool on this GPU: K and V for every attention layer, or the MLA latent
    (kv_lora_rank + qk_rope_head_dim, no padding)."""
    return int(kv_cache(spec, 1, 1, kv, "vllm")["per_token"])


def evaluate(spec, ctx, kv, w_bytes, vram, tp: int, mfs: float) -> dict:
    cell = cell_bytes(spec, kv)
    detail = dict(kv_cache(spec, ctx, 1, kv, "vllm", swa_full=True), layout="latent" if spec.mla else "heads")
    need = cell * ctx
    detail.update(per_token=cell, total=need)
    out = {"kv": detail,
           "overhead": {"cuda_context": CUDA_CONTEXT, "nccl": NCCL if tp > 1 else 0}, "fits": None, "tokens": None}
    if not vram:
        out["total"] = int(w_bytes + need + CUDA_CONTEXT + out["overhead"]["nccl"])
        return out
    free0 = vram - CUDA_CONTEXT - out["overhead"]["nccl"]
    rest = mfs * free0 - w_bytes
    tokens = max(int(rest // cell), 0)
    out.update(free0=int(free0), pool=int(max(rest, 0)), tokens=tokens, fits=bool(tokens > 0), whole=tokens >= ctx,
               total=int(vram), budget=int(mfs * free0),
               mfs_needed=(w_bytes + need) / free0)
    return out


def plan(spec, ctx, kv, roles, vram, knobs, notes) -> dict:
    """The verdict and the flags for `python -m sglang.launch_server` (no layer offload, no search of other
    settings: the least --mem-fraction-static that holds one request is named instead)."""
    tp = knobs.get("tensor_parallel_size") or 1
    mfs = knobs.get("mem_fraction_static") or default_mfs(tp)
    ev = evaluate(spec, ctx, kv, roles["total"], vram, tp, mfs)
    out = {"model": spec.summary(), "runtime": "sglang", "runtime_version": knobs.get("runtime_version"), "ctx": ctx,
           "parallel": 1, "kv_dtype": kv, "weights": int(roles["total"]), "weights_how": roles["how"],
           "weights_by_role": {k: roles[k] for k in ("embedding", "output", "blocks")},
           "kv_per_token": ev["kv"]["per_token"], "kv_total": ev["kv"]["total"], "kv_detail": ev["kv"],
           "overhead": ev["overhead"], "overhead_total": int(sum(ev["overhead"].values())), "total": ev["total"],
           "vram": int(vram) if vram else None, "budget": ev.get("budget"), "fits_as_requested": ev["fits"],
           "fits": ev["fits"], "max_ctx": None, "max_ctx_by_kv_dtype": {}, "flags": [], "autofit": [], "notes": notes}
    flags = [{"kind": "flag", "name": "--context-length", "value": str(ctx), "text": f"--context-length {ctx}",
              "reason": "longest request"}]
    if tp > 1:
        flags.append({"kind": "flag", "name": "--tp", "value": str(tp), "text": f"--tp {tp}",
                      "reason": "the GPUs these per-GPU figures are for"})
    if vram:
        out["kv_capacity_tokens"] = out["sglang_max_total_tokens"] = ev["tokens"]
        out["kv_capacity_bytes"] = ev["pool"]
        out["max_ctx"] = out["max_ctx_by_kv_dtype"][kv] = ev["tokens"]
        need = math.ceil(ev["mfs_needed"] * 100) / 100
        use = max(mfs, need) if need < 0.95 else None
        if use is not None:
            flags.append({"kind": "flag", "name": "--mem-fraction-static", "value": f"{use:.2f}",
                          "text": f"--mem-fraction-static {use:.2f}",
                          "reason": f"static share for weights + KV pool; one {ctx}-token request needs at least {need:.2f}"})
        notes.append(f"SGLang would allocate a pool of {ev['tokens']:,} tokens (max_total_num_tokens) at "
                     f"--mem-fraction-static {mfs:.2f}")
        if not ev["fits"]:
            notes.append("the weights leave no KV pool: SGLang stops with 'Not enough memory. Please try to increase "
                         "--mem-fraction-static'")
        elif not ev["whole"]:
            notes.append(f"SGLang starts, but a request's input is capped at {ev['tokens'] - 1:,} tokens, not {ctx:,} "
                         "(the pool); " + ("raise --mem-fraction-static" if use else "an fp8 cache or more GPUs hold more"))
    out["flags"] = flags
    out["command"] = "python -m sglang.launch_server --model-path MODEL " + " ".join(f["text"] for f in flags)
    return out
