"""llama.cpp (llama-server): weights split by layer (-ngl), the KV cache of -c cells shared by the -np slots,
the ggml compute buffer, and a margin.

  -c is the whole cache: `--ctx-size 65536 --parallel 4` is one 64k cache (unified, or 4 streams of 16k), not
  four; each slot can use -c / -np tokens unless the cache is unified (-kvu, the default when -np is not
  given: tools/server since ggml-org/llama.cpp#16736 / #17997).
  flash attention: -fa auto (on for CUDA) in builds from September 2025; before, off unless -fa.
  --fit (builds from December 2025, on by default there): llama.cpp lowers -c and -ngl itself to fit the free
  memory (common_fit_params); our figure is the one to compare with its "memory breakdown" lines."""
from ...units import MiB
from ..cache import kv_cache
from . import at_least

CUDA_CONTEXT = 384 * MiB     # ggml-cuda context + cuBLAS handles
MARGIN = 256 * MiB           # left free for fragmentation and the driver
FLASH_AUTO = (6400,)         # -fa auto
UNIFIED_SPLIT = (5913,)      # from b5913 slots may get their own streams (ggml-org/llama.cpp#14847)
FIT = (7400,)                # --fit


def settings(version, knobs, parallel) -> dict:
    flash = knobs.get("flash_attn")
    if flash is None:
        flash = at_least(version, *FLASH_AUTO)
    unified = knobs.get("kv_unified")
    if unified is None:
        unified = parallel == 1 or not at_least(version, *UNIFIED_SPLIT)
    return {"flash": bool(flash), "ubatch": knobs.get("ubatch") or 512, "ngl": knobs.get("ngl"),
            "swa_full": bool(knobs.get("swa_full")), "unified": bool(unified), "version": version,
            "mla_cache": knobs.get("mla_cache") or ("latent" if at_least(version, 7800) else "latent+v"),
            "kv_v": knobs.get("kv_dtype_v"), "mmproj": bool(knobs.get("mmproj"))}


def compute_buffer(spec, cells: int, ubatch: int, flash: bool) -> int:
    """ggml compute buffer for a full offload: the larger of the attention scores (absent with flash attention)
    and the output logits, 4 bytes each (Ollama's GraphSize for llama-family graphs)."""
    d, H, V = spec.hidden, spec.n_heads, spec.vocab
    logits = 4 * ubatch * (d + V)
    ffn = 4 * ubatch * (4 * d + max(spec.intermediate, spec.moe_intermediate * max(spec.n_experts_per_tok, 1)))
    if flash:
        return int(max(logits, ffn))
    return int(max(4 * ubatch * (1 + 4 * d + cells * (1 + H)), logits))


def evaluate(spec, ctx, parallel, kv, roles, vram, s, projector=None) -> dict:
    kvd = kv_cache(spec, ctx, parallel, kv, "llama.cpp", ubatch=s["ubatch"], swa_full=s["swa_full"], kv_v=s["kv_v"],
                   mla_cache=s["mla_cache"], unified=s["unified"], flash=s["flash"])
    L = spec.n_layers
    ngl = L + 1 if s["ngl"] is None else s["ngl"]
    on = min(ngl, L)
    emb, out, blocks = roles["embedding"], roles["output"], roles["blocks"]
    gpu_w = blocks * on / L + (out if ngl > L else 0)
    over = {"cuda_context": CUDA_CONTEXT,
            "compute_buffer": compute_buffer(spec, kvd["cells"], s["ubatch"], s["flash"]) if ngl > 0 else 0}
    if projector and s["mmproj"]:
        over["projector"] = projector["weights"] + projector["graph"]
    if vram:
        over["margin"] = max(MARGIN, int(0.02 * vram))
    total = gpu_w + kvd["total"] * on / L + sum(over.values())
    return {"kv": kvd, "overhead": over, "total": int(total), "gpu_weights": int(gpu_w),
            "fits": total <= vram if vram else None, "budget": int(vram) if vram else None, "ngl": ngl,
            "host_weights": int(emb + blocks * (L - on) / L + (0 if spec.tied or ngl > L else out))}


def autofit(version, ev) -> list:
    if at_least(version, *FIT):
        return [("--fit on", "llama.cpp builds since December 2025 lower -c and -ngl to the free memory themselves "
                 "(the default there); compare its memory breakdown with the figures above")]
    return []
