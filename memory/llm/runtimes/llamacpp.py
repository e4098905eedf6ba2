"""llama.cpp (llama-server): weights split by layer (-ngl), the KV cache of -c cells shared by the -np slots,
the ggml compute buffer, and a margin.

  -c is the whole cache: `--ctx-size 65536 --parallel 4` is one 64k cache (unified, or 4 streams of 16k), not
  four; each slot can use -c / -np tokens unless the cache is unified (-kvu, the default when -np is not
  given: tools/server since ggml-org/llama.cpp#16736 / #17997).
  flash attention: -fa auto (on for CUDA) in builds from September 2025; before, off unless -fa.
  --fit (builds from December 2025, on by default there): llama.cpp lowers -c and -ngl itself to fit the free
  memory (common_fit_params); our figure is the one to compare with its "memory breakdown" lines.
  several GPUs (--tensor-split, the `tensor_split` knob): the layers are placed as load_tensors places them and each
  device's layers, KV buffer and weights are given (`devices`); the totals are the whole load's."""
import re

from ...errors import UserError
from ...units import MiB
from ..cache import CTX_STEP, LLAMACPP_PAD_NO_FLASH, kv_cache
from ..gguf import gguf_arch
from ..spec import FULL, LINEAR, MAMBA, SLIDING
from ..weights import layer_weights
from . import at_least, ik_build
from .llamacpp_compute import compute_buffer, ffn_live_values, per_layer_inputs  # noqa: F401  (LC.*, ollama.py)
from .llamacpp_mask import mask_elements
from .llamacpp_kv_padding import QUANT_KV, kv_buffer_pad  # noqa: F401  (QUANT_KV re-exported: its old home)
from .llamacpp_offload import cpu_expert_bytes, override_cpu_layers  # noqa: F401  (plan.py reads them here)

CUDA_CONTEXT = 384 * MiB     # ggml-cuda context + cuBLAS handles
MARGIN = 256 * MiB           # left free for fragmentation and the driver
FLASH_AUTO = (6400,)         # -fa auto
UNIFIED_SPLIT = (5913,)      # from b5913 slots may get their own streams (ggml-org/llama.cpp#14847)
FIT = (7400,)                # --fit
# --fit (on by default in those builds) offloads only what leaves --fit-target free on every GPU: 1024 MiB by default
# (common/common.h fit_params_target); a llama-server of a --fit build started without -ngl therefore puts every
# layer on a GPU only when the load leaves that much free, not the 256 MiB margin of older builds. Ollama 0.30 and
# later start llama-server that way (llm/llama_server.go passes no -ngl unless num_gpu is set).
FIT_TARGET = 1024 * MiB
# -ngl N counts the output layer first (ggml-org/llama.cpp#18148, merged December 2025 a few days after --fit):
# i_gpu_start = n_layer + 1 - N, so -ngl 20 of a 48-layer model puts the output and 19 repeating layers on the GPU
# ("offloading output layer and 19 repeating layers to GPU", LM Studio's engine, January 2026); before, the last N
# repeating layers and the output only beyond n_layer (Ollama's vendored llama.cpp up to 2026: "offloading 5
# repeating layers to GPU"). The first build carrying it is not read: taken as --fit's.
OUTPUT_FIRST = FIT
# -ngl -1 is common_params' "unset": common_model_params_to_llama then keeps llama_model_default_params' n_gpu_layers,
# 0 (the CPU) in builds up to mid-2025 (Jan forwarded -ngl 100 for that reason, janhq/jan#5310, June 17 2025: taken
# as b5700) and every layer later (999, then -1). On --fit builds -1 is also "-ngl auto" (common/arg.cpp: auto -1,
# all -2): the fitter chooses, as without -ngl. Which build between moved the default to every layer is not read, so
# -1 there is refused. Ollama's num_gpu -1 is its own placement, as without num_gpu.
NGL_DEFAULT_CPU_BEFORE = (5700,)
NGL_WORDS = {"auto": -1, "all": -2}
# -b / --batch-size (kv's --batch, the `batch` knob): llama-server's and llama-cli's default is 2048 beside -ub 512
# (common/common.h 403-404, common_params n_batch / n_ubatch), as is libllama's for another program (src/llama-context.cpp
# 2890-2891, llama_context_default_params), and the context caps -b at -c and -ub at -b (src/llama-context.cpp 161-163:
# n_batch = min(n_ctx, n_batch) with causal attention, n_ubatch = min(n_batch, n_ubatch)); all at TheTom/llama-cpp-
# turboquant 69d8e4be (b9079), the same statements at ggml-org/llama.cpp 001d906a (src/llama-context.cpp 386-388). The
# reserve's graph is therefore min(-c, -b, -ub) tokens: -ub 4096 given alone runs at 2048 (evaluate).
BATCH = 2048
# (rev19 D1) ik_llama.cpp pads -c before those caps: llama_new_context_with_model pads n_ctx to llama_kv_cache::
# get_padding (256 cells with flash attention, 32 without: src/llama-context.h 74), then n_batch = min(n_ctx, n_batch),
# raised to GGML_KQ_MASK_PAD (16) below it, and n_ubatch = min(n_batch, n_ubatch) (src/llama.cpp 8161-8174 at
# ikawrakow/ik_llama.cpp 8337e4cd; its -b / -ub defaults are 2048 / 512, common/common.h 296-297), so -c 1000 -b/-ub 8192
# runs at 1024 there with flash attention. Mainline caps at the -c given and pads after (src/llama-context.cpp 181 at
# 69d8e4be; since the llama_context refactor, e0dbec0bc, b4881: builds before it padded first too, not modelled).
# GGML_KQ_MASK_PAD is 16 there: ggml/include/ggml.h 2485 at ikawrakow/ik_llama.cpp 8337e4cd (the 64 of its closed
# PR #574, mainline's value then, is not in that header).
IK_KQ_MASK_PAD = 16


def batch_ctx(s, ctx: int) -> int:
    """The context that caps -b: -c as given on llama.cpp, padded on ik_llama.cpp (256 cells with flash attention, 32
    without)."""
    if not s.get("ik"):
        return ctx
    step = CTX_STEP if s["flash"] else LLAMACPP_PAD_NO_FLASH
    return -(-ctx // step) * step


def micro_batch(s, ctx) -> int:
    """The tokens llama.cpp's reserve graph is built for: min(-c, -b, -ub) (BATCH); ik_llama.cpp's -c padded first."""
    ub, batch = s["ubatch"], s.get("batch") or BATCH
    if not ctx:
        return min(ub, batch)
    if s.get("ik"):
        return min(max(min(batch_ctx(s, ctx), batch), IK_KQ_MASK_PAD), ub)
    return min(ub, batch, ctx)


def resolve_ngl(ngl, version, knobs, runtime: str):
    """-ngl as the runtime reads it: None (the default placement), an exact count, or ALL (every layer, no fit)."""
    ngl = NGL_WORDS.get(ngl.strip().lower(), ngl) if isinstance(ngl, str) else ngl
    if ngl is None or (isinstance(ngl, int) and not isinstance(ngl, bool) and ngl >= 0):
        return ngl
    if not isinstance(ngl, int) or isinstance(ngl, bool) or ngl < -2 or (ngl == -2 and runtime != "llama.cpp"):
        raise UserError(f"--ngl takes a layer count, -1 / auto (the default placement) or, for llama.cpp, -2 / all; "
                        f"got {ngl!r}")
    if runtime != "llama.cpp":
        return None
    if fork(knobs):
        raise UserError("--ngl -1/-2 on ik_llama.cpp: its default layer count changed in 2026 (ik_llama.cpp#2209); "
                        "give -ngl N")
    if ngl == -2:
        return ALL_LAYERS
    if version is not None and not at_least(version, *NGL_DEFAULT_CPU_BEFORE):
        return 0
    if at_least(version, *FIT):
        return None
    raise UserError("--ngl -1 keeps the build's default layer count, 0 before mid-2025 (b5700) and every layer by "
                    "--fit (b7400); the build that changed it is not known here: give -ngl N for this build")


ALL_LAYERS = 1 << 20  # -ngl all / 999: more than any model's layers
# ikawrakow/ik_llama.cpp (a --runtime-version that names it): llama.cpp's cache layout without its sliding-window
# cache: every layer of a sliding-window model is kept at -c cells (gpt-oss-20b at 131072: 6144.00 MiB, ik_llama.cpp
# #822, where llama.cpp allocates 3 GiB; the maintainer on #1594: SWA KV compression is a feature still to request)


# --spec-type draft-mtp (ggml-org/llama.cpp#22673, May 2026) on a Qwen 3.5+ GGUF with its MTP layer (config
# mtp_num_hidden_layers; GGUF nextn layers after the n_layer repeating ones), -n = --spec-draft-n-max:
#   the target context gets n_rs_seq = n (common_params_speculative::need_n_rs_seq) and llama_memory_recurrent sizes
#   its R/S tensors mem_size x (1 + n_rs_seq): the RS buffer holds 1 + n snapshots of the recurrent state
#   (llama_memory_recurrent: "1 seqs 2 rs_seq", 3 x 149.6 = 449 MiB for Qwen3.8-27B, sudoingX/qwen38-mtp);
#   server-context.cpp builds a second context on the same model (no second copy of the weights) from the target's
#   own params (common_context_params_to_llama(params_base): its n_ctx, n_seq_max, n_ubatch, kv_unified) with
#   ctx_type LLAMA_CONTEXT_TYPE_MTP, n_rs_seq 0 and the draft cache types (-ctkd / -ctvd, f16 by default);
#   llama_model::create_memory gives it a plain llama_kv_cache over the layers il >= n_layer only (mtp_on_hybrid_qwen35):
#   one full-attention layer's cache at f16 (Qwen3.8-27B at 262,144 cells: 1,024.00 MiB, victoralcazardev/
#   rx7900xtx-local-llm docs/measurements/memory.md). Its compute buffer (sched_reserve of an n_ubatch graph) is
#   not sized: backends differ (294 MiB on Metal at 32k, 324 MiB on ROCm at 262k for the same model; ROCm's flash
#   workspace grows with n_ctx, llama.cpp#26038; CUDA may share the target's, llama.cpp#27489).
# llm_arch_supports_rs_rollback names QWEN35 / QWEN35MOE; other archs' MTP contexts are not read here.
DRAFT_MTP_ARCHS = ("qwen35", "qwen35moe")  # GGUF names, read through gguf_arch (rev20 S1)
DRAFT_KV = "f16"            # common_params_speculative_draft cache_type_k / cache_type_v (-ctkd / -ctvd)
DRAFT_N_MAX = 64            # a --spec-draft-n-max beyond this is not a plausible draft length


def check_draft_mtp(spec, n, knobs) -> None:
    """--spec-type draft-mtp as modelled: a Qwen 3.5+ model with its MTP layer, one GPU."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= DRAFT_N_MAX:
        raise UserError(f"--mtp-tokens (llama.cpp --spec-draft-n-max with --spec-type draft-mtp) must be a whole number "
                        f"1-{DRAFT_N_MAX}, got {n!r}")
    if gguf_arch(spec) not in DRAFT_MTP_ARCHS or not spec.mtp_layers:
        raise UserError(f"{spec.name}: llama.cpp's draft-mtp is modelled for Qwen 3.5+ models with their MTP layer "
                        "(mtp_num_hidden_layers); this model's MTP context (or a -md draft model) is not sized here")
    if fork(knobs):
        raise UserError("--mtp-tokens on ik_llama.cpp: its speculative contexts are not read; plan without it")
    if (knobs.get("num_gpus") or 1) > 1 or knobs.get("tensor_split"):
        raise UserError("--mtp-tokens with llama.cpp over several GPUs: the device of the MTP layer's cache is not read; "
                        "plan one GPU")


def draft_mtp(spec, kvd, n: int, ctx, parallel, s) -> dict:
    """Bytes draft-mtp adds: the target's n extra recurrent-state snapshots and the MTP context's own KV cache."""
    draft = kv_cache(spec, ctx, parallel, s.get("draft_kv") or DRAFT_KV, "llama.cpp", ubatch=s["ubatch"], swa_full=s["swa_full"],
                     unified=s["unified"], flash=s["flash"])
    return {"mtp_state_snapshots": int(kvd["recurrent_state"] * n),
            "mtp_draft_kv": int(draft["per_full_layer"] * spec.mtp_layers)}


def settings(version, knobs, parallel) -> dict:
    gpus = knobs.get("num_gpus")
    if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= 64):
        raise UserError(f"--num-gpus must be a whole number 1..64, got {gpus!r}")
    gpus = gpus or 1
    split = knobs.get("tensor_split")
    if split and gpus > 1 and len(split) != gpus:
        raise UserError(f"--tensor-split names {len(split)} GPUs, --num-gpus {gpus}")
    batch = knobs.get("batch")
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int) or batch < 1):
        raise UserError(f"--batch (llama.cpp -b) must be a whole number of tokens >= 1, got {batch!r}")
    ncm = knobs.get("n_cpu_moe")
    if ncm is not None and (isinstance(ncm, bool) or not isinstance(ncm, int) or ncm < 0):
        raise UserError(f"--n-cpu-moe must be a whole number of layers >= 0, got {ncm!r}")
    flash = knobs.get("flash_attn")
    if flash is None:
        flash = at_least(version, *FLASH_AUTO)
    unified = knobs.get("kv_unified")
    if unified is None:
        unified = parallel == 1 or not at_least(version, *UNIFIED_SPLIT)
    return {"flash": bool(flash), "ubatch": knobs.get("ubatch") or 512, "batch": batch or BATCH, "ngl": knobs.get("ngl"),
            "swa_full": bool(knobs.get("swa_full")) or fork(knobs), "unified": bool(unified), "version": version,
            "mla_cache": knobs.get("mla_cache") or mla_default(version),
            "kv_v": knobs.get("kv_dtype_v"), "mmproj": bool(knobs.get("mmproj")),
            # --num-gpus N: N cards of --vram each, split as llama.cpp splits by default (each device's free memory:
            # equal on identical idle cards) unless -ts is given; judged per card (per_gpu)
            "tensor_split": split or ([1] * gpus if gpus > 1 else None), "per_gpu": gpus > 1, "ik": fork(knobs),
            "ik_build": ik_build(knobs.get("runtime_version")),
            "weights_format": knobs.get("weights_format"),
            "output_first": at_least(version, *OUTPUT_FIRST) and not fork(knobs),
            "fit": at_least(version, *FIT) and not fork(knobs) and knobs.get("ngl") is None,
            "draft_mtp": knobs.get("mtp_tokens"), "draft_kv": knobs.get("draft_kv_dtype"),
            "gpu_name": knobs.get("gpu_name"), "n_cpu_moe": knobs.get("n_cpu_moe"),
            "override_tensor": knobs.get("override_tensor"), "entrypoint": entrypoint(knobs)}


def entrypoint(knobs) -> str:
    """--llamacpp-entrypoint: llama-server (default) or another program on libllama's context defaults (ENTRYPOINTS)."""
    e = knobs.get("llamacpp_entrypoint") or "server"
    if e not in ENTRYPOINTS:
        raise UserError(f"--llamacpp-entrypoint must be {' or '.join(ENTRYPOINTS)}, got {e!r}")
    return e


# DeepSeek's MLA cache by build. ggml-org/llama.cpp#12801 (merged 2025-04-15) cached the latent (kv_lora_rank +
# rope values) plus a V cache of kv_lora_rank, for GGUFs converted from then on (an older GGUF keeps full K/V on any
# build); before it every build stored per-head K and V (MLA_CACHES "full": DeepSeek-V2-Lite 27 layers x 16 heads x
# (192 + 128) x 2 bytes = 270 KiB a token). #19067 (2026-01) keeps the latent only. The build carrying #12801 is not
# read here (llama.cpp's history is over the fetch limit): builds up to b4391 are known to predate it ("Version b4391",
# ggml-org/llama.cpp#10981, 2024-12-26) and b5913 to follow it ("version: 5913 (225e7a14)", 2025-07-16); between,
# the build is not known to hold either: latent+v is kept as before and the plan says so (--mla-cache full for a build
# before April 2025).
MLA_FULL_UNTIL = (4391,)
MLA_LATENT_V_FROM = (5913,)
MLA_LATENT_FROM = (7800,)
# ggml-org/llama.cpp PR #25871 (merged 2026-07-18) brought llama_init_from_model's MLA "model does not support different
# K and V cache types" refusal and the "quantized V cache requires flash_attn to be enabled" wording (builds before it:
# mixed K/V types on an MLA cache ran; "V cache quantization requires flash_attn"). Its exact build is unknown:
# ggml-org/llama.cpp#26382 shows both at b10216, so b10216 is the latest it can be (a build between the merge and b10216
# is read as before it)
MLA_ONE_TYPE_FROM = (10216,)


def mla_default(version):
    """The MLA cache a build keeps for a GGUF converted with it: full, latent+v or latent."""
    if at_least(version, *MLA_LATENT_FROM):
        return "latent"
    return "full" if not at_least(version, MLA_FULL_UNTIL[0] + 1) else "latent+v"


def mla_build_unknown(version) -> bool:
    """True for a build between MLA_FULL_UNTIL and MLA_LATENT_V_FROM: its MLA cache is not known."""
    return version is not None and at_least(version, MLA_FULL_UNTIL[0] + 1) and not at_least(version, *MLA_LATENT_V_FROM)


def fork(knobs) -> bool:
    """True when the runtime version names ik_llama.cpp."""
    return str(knobs.get("runtime_version") or "").lower().replace("-", "_").startswith("ik_llama")


def gpu_start(n_layer: int, ngl: int, output_first: bool = False) -> int:
    """i_gpu_start: the first repeating layer -ngl puts on a GPU (OUTPUT_FIRST)."""
    return max(n_layer + (1 if output_first else 0) - ngl, 0)


def layer_devices(n_layer: int, ngl: int, split, output_first: bool = False) -> tuple:
    """llama.cpp's placement of the layers over several GPUs (llama_model::load_tensors): the -ts proportions
    (by default each device's free memory) made cumulative; repeating layer il goes to the first device whose
    cumulative share exceeds (il - i_gpu_start) / act_gpu_layers, where act_gpu_layers = min(ngl, n_layer + 1)
    counts the output layer too, which goes where (act_gpu_layers - 1) / act_gpu_layers falls. Returns (repeating
    layers per device, the output layer's device or None, layers left on the CPU)."""
    total = float(sum(split))
    cum, acc = [], 0.0
    for x in split:
        acc += x
        cum.append(acc / total)
    act = min(ngl, n_layer + 1)
    start = gpu_start(n_layer, ngl, output_first)
    counts = [0] * len(split)

    def device(x: float) -> int:
        return min(next((d for d, c in enumerate(cum) if c > x), len(cum) - 1), len(cum) - 1)

    for il in range(start, n_layer):
        counts[device((il - start) / act)] += 1
    out = device((act - 1) / act) if n_layer - start < act else None
    return counts, out, start


def layer_kv_bytes(spec, kvd) -> list:
    """Each layer's cache (its "KV buffer" share): a full layer's, a sliding layer's (its window's cells), none for a
    recurrent, MLP-only or KV-shared layer (has_kv(il) false)."""
    n_full, n_swa = spec.layer_kinds.count(FULL), spec.layer_kinds.count(SLIDING)
    return [kvd["full_layers"] / n_full if k == FULL else kvd["sliding_layers"] / n_swa if k == SLIDING else 0
            for k in spec.layer_kinds]


def layer_indexer_bytes(spec, kvd) -> list:
    """Each layer's share of a DSA model's indexer key cache (cache.indexer_bytes; 0 for a layer without one)."""
    keep = set(spec.indexer_layers or range(spec.n_layers))
    return [kvd.get("indexer", 0) / len(keep) if il in keep else 0 for il in range(spec.n_layers)]


def devices(spec, kvd, roles, ngl, split, pad: int = 0, lw=None, output_first: bool = False, moved=None) -> list:
    """Per GPU: its repeating layers, their KV cache (llama.cpp's "CUDAn KV buffer size") and weights (layer
    split: each layer's blocks, the output tensor on the device of the last layer; -sm row splits the matrices
    by rows over the same proportions but keeps each layer's cache where -sm layer would put it). A glm-dsa GGUF's
    nextn blocks (spec.gguf_nextn_blocks) are placed after the layers, with neither weights nor cache; `moved`: each
    layer's routed experts --n-cpu-moe keeps in host memory, off its device's weights; a DSA model's indexer cache
    ("creating indexer KV cache", its own KV buffer lines) is each device's "indexer", beside the KV buffer."""
    L, nx = spec.n_layers, spec.gguf_nextn_blocks
    counts, out_dev, start = layer_devices(L + nx, ngl, split, output_first)
    lw = list(lw or [roles["blocks"] / L] * L) + [0] * nx
    per_layer = layer_kv_bytes(spec, kvd) + [0] * nx
    n_state = sum(k in (LINEAR, MAMBA) for k in spec.layer_kinds)  # linear / mamba layers (an MLP-only layer has none)
    per_state = [kvd.get("recurrent_state", 0) / n_state if k in (LINEAR, MAMBA) else 0 for k in spec.layer_kinds]
    per_index = layer_indexer_bytes(spec, kvd)
    moved = list(moved or [0] * L) + [0] * nx
    res, il = [], start
    for d, n in enumerate(counts):
        layers = min(n, max(L - il, 0))  # the placed blocks less the nextn ones, which hold no cache
        kv = sum(per_layer[il:il + n]) + pad * sum(b > 0 for b in per_layer[il:il + n])  # (rev7 B5) layers that hold KV
        w = sum(lw[il:il + n]) - sum(moved[il:il + n]) + (roles["output"] if d == out_dev else 0)
        res.append({"layers": layers, "kv": int(kv), "weights": int(w), "output_layer": d == out_dev,
                    "state": int(sum(per_state[il:il + n])),  # its "RS buffer size", beside the KV buffer
                    "indexer": int(sum(per_index[il:il + n]))})
        il += n
    return res


# llama-server reserves the logits of n_outputs_max rows, not of a whole ubatch (ggml-org/llama.cpp#23861, de6f727aa,
# 2026-06-01): llama_context's reserve builds the prompt graph with n_outputs_pp = min(n_tokens, cparams.n_outputs_max)
# and tools/server sets n_outputs_max = max(1, min(n_batch, n_parallel x (1 + the speculative draft's n_max)))
# (server_n_outputs_max; an embedding or pooling server keeps n_batch). Its first build: after b9442 (d4c8e2c29, the
# llama_cpp_ex binding's v0.8.16, without it) and by b9479 (0b7154066, v0.8.17, with it); a Beelink benchmark log names
# de6f727aa b9453, taken here. The llama.cpp history itself was not read (its snapshot is over the fetch limit).
# Applied only to a build named (--runtime-version b9453 or later): without the logits, what the reserve holds is the
# rest of the prompt graph, which compute_buffer's feed-forward term models only in part (printed 447 MiB at b9849
# against 224 before round 59's live set, 352 with it; 164 at b10450 against 74, then 144; 1360 at b11160 262k against
# 74), so an unnamed build keeps the whole ubatch's logits (review16b F11): the larger figure, not one under every print.
OUTPUTS_MAX = (9453,)
# Only llama-server sets n_outputs_max; another program on libllama (llama-simple, a binding such as the Rust crate
# llama-cpp-2 with LlamaContextParams::default()) keeps the context's default, n_outputs_max 0 -> n_batch, so its
# reserve holds a whole ubatch's logits on any build (--llamacpp-entrypoint library; bloomery's qwen35moe on Vulkan at
# b10200 prints 493.00 MiB at 54,784 and 231,168 cells alike: 512 x 248320 f32 logits, kv-accuracy round 98)
ENTRYPOINTS = ("server", "library")


def server_outputs(parallel: int, draft_n: int | None, ubatch: int) -> int:
    """Rows of logits llama-server's prompt graph reserves from OUTPUTS_MAX: -np x (1 + --spec-draft-n-max)."""
    return max(1, min(ubatch, max(parallel, 1) * (1 + (draft_n or 0))))


# Op offload (ggml-backend.cpp ggml_backend_sched_backend_id_from_cur, "1.off"): an op whose weight sits in a host
# buffer of the CPU backend runs on a higher-priority GPU backend that wants it (ggml_backend_offload_op), and the
# weight is copied into that GPU's compute buffer as an input of its own split (split_graph: "by starting a new split,
# the memory of the previously offloaded weights can be reused"). CUDA/ROCm and Vulkan want an op whose batch is at
# least GGML_OP_OFFLOAD_MIN_BATCH (32; a MUL_MAT's ne[1], its rows: ggml_backend_cuda_device_offload_op,
# ggml_backend_vk_device_offload_op); Metal never (ggml_backend_metal_device_offload_op returns false). With the
# output layer on the CPU (-ngl 0, or -ngl up to n_layer before OUTPUT_FIRST) the reserve's output matmul therefore
# runs on the GPU: its split holds the output matrix's copy beside the logits (Qwen3-0.6B -ngl 0 at b5489: CUDA0
# compute buffer 422.92 MiB, 296.75 of logits + 121.71 of Q6_K output + 2 of activations). --no-op-offload
# (llama_context_params.op_offload, off by default) is not an input here; the other offloaded splits (a layer's own
# matrices) are smaller than the output's and are not sized.
OP_OFFLOAD_MIN_BATCH = 32
# a Metal device (Apple silicon): a name with Apple, Metal or Mac in it, or an M-series chip alone at the start ("M2
# Ultra", "M4 Pro"); never NVIDIA's Maxwell M cards, whose M number follows Tesla/Quadro/GRID ("Tesla M4", "GRID M6-8Q")
METAL_GPU = re.compile(r"apple|metal|\bmac(?:book)?\b|^\s*m[1-9](?: pro| max| ultra)?\b(?!-)", re.I)


# Metal maps an mmap'd model file into its model buffer: one buffer per file over the range from the context's first
# to its last tensor (llama-model.cpp load_tensors: ml.get_mapping_range + ggml_backend_dev_buffer_from_host_ptr), the
# host tensors lying in between included. convert_hf_to_gguf writes generate_extra_tensors first (prepare_tensors:
# chain(generate_extra_tensors(), get_tensors())), and Gemma 4's is rope_freqs (Gemma4Model: the global layers'
# proportional RoPE), a layer-0 tensor: with every layer on the GPU the span is the whole file's tensor data. Two logs:
# Gemma-4-E2B Q4_K_M on an M4, MTL0_Mapped 2947.73 MiB of a 2.88 GiB file (CPU_Mapped 216.00, token_embd alone);
# E4B Q8_0, 7798.32 of 7.62 GiB. An Ollama blob comes from Ollama's own converter, whose order is not read
METAL_SPAN_ARCHS = ("gemma4",)


def metal_span(spec, s) -> bool:
    """Is the GPU model buffer the whole file's tensor data (Metal, a converted Gemma 4 GGUF)?"""
    return (bool(METAL_GPU.search(str(s.get("gpu_name") or ""))) and spec.arch.startswith(METAL_SPAN_ARCHS)
            and not getattr(spec, "ollama", False))


# A Vulkan device (ggml-vulkan): llama.cpp names its devices by backend ("Vulkan0 (NVIDIA GeForce GTX 1660 SUPER (NVK
# TU116))", "ggml_vulkan: Found 1 Vulkan devices"), and a name given with Vulkan in it is taken as that backend. It holds
# no CUDA context or cuBLAS handles: CUDA_CONTEXT is ggml-cuda's. What ggml-vulkan keeps on the device beyond the ggml
# buffers (weights, KV, compute) are its preallocated matmul buffers (ggml_vk_preallocate_buffers: prealloc_x for a
# weight dequantized to f16, prealloc_y for an input converted to f16 or quantized to q8_1, prealloc_split_k; each sized
# by the largest matmul that needs it, created at the first graph, device-local) - for a K-quant weight with an f32
# input and no integer-dot pipeline none is needed, otherwise the largest input in q8_1 (Qwen2.5-7B at -ub 512: ffn_down's
# 512 x 18944, 10.4 MiB) - not sized here; its staging buffers are host-visible (host memory on a discrete card), its
# descriptor pools the driver's. The free figure a Vulkan build prints (the fit step's "MiB of free device memory",
# --list-devices) is the heap budget less the process's use (VK_EXT_memory_budget), read with its VkDevice created.
VULKAN_GPU = re.compile(r"vulkan", re.I)
# A Metal device (METAL_GPU) holds no CUDA context either. ggml-metal's device (ggml_metal_device_init) is an
# MTLDevice, a command queue, the compiled shader library and residency sets; its only MTLBuffers are the ggml buffers
# (weights, KV, compute: ggml_backend_metal_buffer_type_alloc_buffer) and the transient ones of a tensor copy. Its
# memory figures are the working set: total recommendedMaxWorkingSetSize, free that less currentAllocatedSize
# (ggml_metal_device_get_memory), so the "MTL0 total" and the "MiB free" a build prints at start are the same budget,
# which a Metal row's --vram is. Nothing is charged on it beyond the ggml buffers (ollama/ollama ml/backend/ggml/ggml/
# src/ggml-metal/ggml-metal-device.m, the copy vendored up to f63eea3d2).
METAL_CONTEXT = 0


def device_context(s) -> int:
    """Bytes of the backend's own context the plan charges on each GPU: ggml-cuda's (CUDA_CONTEXT), none on Vulkan
    (VULKAN_GPU) or Metal (METAL_CONTEXT). --vram is memory read before the runtime starts (the card, nvidia-smi's free):
    a figure llama.cpp printed itself on CUDA is read after its context and is that much smaller (bench_llm's
    "llamacpp_free" rows)."""
    name = str(s.get("gpu_name") or "")
    if VULKAN_GPU.search(name):
        return 0
    if METAL_GPU.search(name):
        return METAL_CONTEXT
    return CUDA_CONTEXT


def offloads_output(s, rows: int) -> bool:
    """Does the GPU backend take the output matmul off a host-side output matrix (op offload)?"""
    return (rows >= OP_OFFLOAD_MIN_BATCH and not METAL_GPU.search(str(s.get("gpu_name") or "")))


# The f32 mask's GPU copy under the logits (kv-accuracy round 71, batch 76). A split input is copied into the GPU's
# compute buffer at the start of its split (ggml-backend.cpp ggml_backend_sched_split_graph: "create a copy of the input
# in the split's backend", the copy a node of graph_copy allocated before the split's own nodes) and freed once its one
# consumer, the f16 cast, is allocated (ggml-alloc.c: a tensor is freed when its last child is; only OUTPUT tensors are
# kept). The freed region is a hole at the bottom of the buffer: ggml_dyn_tallocr hands a tensor the best-fitting free
# block, and a whole ubatch's logits, the graph's largest tensor, fit in no hole, so they go above it while smaller
# tensors still live in it. qwen35moe (Qwen3.5/3.6 MoE) under Vulkan prints exactly that, the logits on top of n_kv x
# n_ubatch x 4 bytes: hogeheer499-commits/strix-halo-guide's b9010 Vulkan logs of Qwen3.6-35B-A3B (UD-Q4_K_M, -ub 512,
# np 1) print 563.78 MiB at 34048 cells and 627.78 at 66816 (q8_0 and q4_0 caches), 576.52 / 640.52 / 768.52 at 34048
# / 66816 / 132352 (f16): 64.00 MiB a 32768 cells and 128.00 a 65536, 4 bytes x 512 rows a cell, over 489.00 MiB of
# logits (512 x 248320 f32 + the 512 x 2048 normed input); 498 at 4096 cells (489 + 8). Which tensors sit in the hole
# is the allocator's walk over the graph, not read: the same build prints Qwen3-Next-80B-A3B (qwen3next) at 308.75 MiB
# at 34048 and 66816 cells (its logits + 8, no mask), Qwen2.5-7B on a GTX 1660 SUPER at its logits (304.0, a 4 MiB
# mask), and CUDA / ROCm builds print Qwen3.5/3.6-35B-A3B near their logits at 64k and 262k (493, 804.02): only
# qwen35moe on a Vulkan device (VULKAN_GPU) takes it, and only with the whole ubatch's logits (before OUTPUTS_MAX). A
# lower bound: the rest of the printed figure (8.28 MiB more with a q8_0 / q4_0 cache, 21.02 with f16, at 34k-132k; 557.02
# at -np 16 x 4096) is not modelled.
MASK_UNDER_LOGITS_ARCHS = ("qwen35moe",)  # GGUF names, read through gguf_arch (rev19 B1, rev20 S1)


def mask_under_logits(spec, s, outs) -> bool:
    """Does the reserve's peak hold the logits above the f32 mask copy's region (qwen35moe on Vulkan, whole-ubatch
    logits)?"""
    return (outs is None and gguf_arch(spec) in MASK_UNDER_LOGITS_ARCHS
            and bool(VULKAN_GPU.search(str(s.get("gpu_name") or ""))))


# A layer left on the CPU runs its attention on the GPU (kv-accuracy round 72, batch 77). Op offload moves the layer's
# matmuls to the GPU (their weights in a host buffer, OP_OFFLOAD_MIN_BATCH), and ggml_backend_sched_split_graph's
# expansion passes give the GPU the unassigned nodes between them, FLASH_ATTN_EXT and the mask's f16 cast among them:
# only a node with a weight (buffer usage WEIGHTS) or a pre-allocated destination picks its backend, and the KV cache's
# buffers are not WEIGHTS (llama-model.cpp alone sets that usage), so the cache writes (set_rows into the CPU KV buffer,
# "1.vsrc") stay on the CPU while the attention reading it does not. Its K and V views (the layer's whole cache, n_kv
# cells at the reserve) live in the CPU buffer and are copied into the GPU's compute buffer as inputs of the split,
# which are allocated at the split's start ("add inputs to the graph copy so that they are allocated by ggml-alloc at
# the start of the split"). In the first layer the split that begins with the f16 cast also holds the f32 mask's copy
# (the cast is added to the graph at its first consumer), so the f32 mask, K, V and the cast are live at once, beside
# the layer's input (the residual the layer's add reads) and its Q; later layers reuse that region. Read in
# ggml/src/ggml-backend.cpp (ggml_backend_sched_backend_id_from_cur, passes 2 and 5), src/llama-graph.cpp
# (build_attn_inp_kv_impl, build_attn) and src/llama-kv-cache.cpp as TheTom/llama-cpp-turboquant keeps them at
# 69d8e4be. Two logs: Bielik-11B-v3 Q5_K_M at 98304 cells, 23 of 50 layers on the CPU (b7972 ROCm): ROCm0 compute
# 699.00 MiB = 192 + 96 of mask + 192 + 192 of layer 0's K and V + 16 of input and Q (688) + 11.0; Llama-3.2-1B Q4_K_M
# at 131072 cells with -ngl 0 (b8319 Vulkan): 658.25 = 256 + 128 + 128 + 128 + 8 (648) + 10.25. The rest is the
# allocator's placement of the layer's earlier tensors, not read: a lower bound. Only where every layer is full
# attention without MLA (a sliding or recurrent first layer brings other inputs) and with flash attention (without it
# the scores' split, not read; no log printed).
def cpu_attention_inputs(spec, kvd, s, start: int) -> int:
    """Bytes the GPU's compute buffer holds for a first layer left on the CPU beside the mask's two copies (flash
    attention, op offload): that layer's K and V views, copied in, and its input and Q, 4 bytes a value; 0 where layer
    0 is on the GPU or the case is not modelled."""
    if not (start > 0 and s["flash"] and offloads_output(s, s["ubatch"]) and not spec.mla
            and all(k == FULL for k in spec.layer_kinds)):
        return 0
    return int(layer_kv_bytes(spec, kvd)[0] + 4 * s["ubatch"] * (spec.hidden + spec.n_heads * spec.head_dim_k))


def evaluate(spec, ctx, parallel, kv, roles, vram, s, projector=None) -> dict:
    s = dict(s, ubatch=micro_batch(s, ctx))  # the micro-batch the reserve is built for
    kvd = kv_cache(spec, ctx, parallel, kv, "llama.cpp", ubatch=s["ubatch"], swa_full=s["swa_full"], kv_v=s["kv_v"],
                   mla_cache=s["mla_cache"], unified=s["unified"], flash=s["flash"])
    L, first = spec.n_layers, s.get("output_first", False)
    ngl = L + spec.gguf_nextn_blocks + 1 if s["ngl"] is None else s["ngl"]
    start = min(gpu_start(L + spec.gguf_nextn_blocks, ngl, first), L)  # a GGUF's nextn blocks are placed first
    on, out_on = L - start, ngl > L or (first and ngl > 0)
    emb, out, blocks = roles["embedding"], roles["output"], roles["blocks"]
    lw = layer_weights(spec, blocks, s.get("weights_format"))  # each layer its own size: the last ones go first
    gpu_w = sum(lw[start:]) + (out if out_on else 0)
    span = start == 0 and out_on and metal_span(spec, s)  # the mapped range from rope_freqs to the last tensor
    if span:
        gpu_w = emb + blocks + (0 if spec.tied else out)
    # --n-cpu-moe N: the routed experts of the first N layers stay in host memory (weights.cpu_moe_bytes); -ot: those
    # of the layers its pattern names (override_cpu_layers); a layer below start is on the CPU already, whole
    host_exps = cpu_expert_bytes(spec, s)
    per_moved = [b if il >= start else 0 for il, b in enumerate(host_exps)] if host_exps and on else None
    moved = sum(per_moved) if per_moved else 0
    gpu_w -= moved
    outs = (server_outputs(parallel, s.get("draft_mtp"), s["ubatch"])
            if s.get("version") is not None and at_least(s["version"], *OUTPUTS_MAX) and not s.get("ik")
            and s.get("entrypoint") != "library" else None)
    rows = s["ubatch"] if outs is None else min(s["ubatch"], outs)
    # the output matrix on the CPU: the GPU still runs the output matmul and copies the matrix in (op offload)
    out_copy = (roles["output"] or (emb if spec.tied else 0)) if not out_on and offloads_output(s, rows) else 0
    mask = mask_elements(spec, kvd, s["ubatch"], s["unified"], parallel)
    cpu_attn = cpu_attention_inputs(spec, kvd, s, start)  # layer 0 on the CPU: its attention on the GPU
    graph = "ik_llama.cpp" if s.get("ik") else "llama.cpp"  # the fork's graph (llamacpp_compute.GRAPHS)
    # no CUDA context on Vulkan (device_context)
    context = device_context(s)
    over = {"cuda_context": context,
            "compute_buffer": (compute_buffer(spec, kvd["cells"], s["ubatch"], s["flash"], outputs=outs, out_copy=out_copy,
                                              mask=mask, under=mask_under_logits(spec, s, outs), cpu_attn=cpu_attn,
                                              graph=graph)
                               if ngl > 0 or out_copy or cpu_attn else 0)}
    if projector and s["mmproj"]:
        over["projector"] = projector["weights"] + projector["graph"]
    if s.get("draft_mtp") and ngl > 0:  # the MTP layer and its cache sit on the GPU with the rest (offload_kqv)
        over.update(draft_mtp(spec, kvd, s["draft_mtp"], ctx, parallel, s))
    split = s.get("tensor_split")
    if vram:  # --fit keeps its target free on every GPU it uses
        over["margin"] = (FIT_TARGET * (len(split) if split else 1) if s.get("fit")
                          else max(MARGIN, int(0.02 * vram)))
    # the cache of the layers on the GPU, by their bytes (a full layer's is the window's 256x at 131072 in Gemma 4),
    # the recurrent state by layer count
    n_state = sum(k in (LINEAR, MAMBA) for k in spec.layer_kinds)
    gpu_kv = kvd["total"] if start == 0 else (sum(layer_kv_bytes(spec, kvd)[start:]) + kvd.get("recurrent_state", 0)
                                              * sum(k in (LINEAR, MAMBA) for k in spec.layer_kinds[start:]) / max(1, n_state)
                                              + sum(layer_indexer_bytes(spec, kvd)[start:]))
    if not context:
        del over["cuda_context"]
    pad = kv_buffer_pad(spec, kv, s["kv_v"], kvd["cells"], s.get("ik"), s.get("ik_build"), s["mla_cache"])
    # (rev7 B5) the CUDA buffer's padded rows of the layers on the GPU that hold KV: in the device's KV buffer (its
    # "KV buffer size" line) and so in the total; over several GPUs each device's share (devices) carries its own
    kv_pad = pad * sum(b > 0 for b in layer_kv_bytes(spec, kvd)[start:]) if ngl > 0 else 0
    gpu_kv += kv_pad
    total = gpu_w + gpu_kv + sum(over.values())
    devs = devices(spec, kvd, roles, ngl, split, pad, lw, first, per_moved) if split and ngl > 0 else None
    fits = total <= vram if vram else None
    if devs and s.get("per_gpu"):  # every card holds its own context, compute buffer and margin next to its layers
        card_margin = (FIT_TARGET if s.get("fit") else over["margin"]) if "margin" in over else 0
        for i, dv in enumerate(devs):  # an offloaded op (the output matmul, layer 0's attention) goes to the first GPU
            copy, attn = (out_copy, cpu_attn) if i == 0 else (0, 0)
            dv["compute_buffer"] = (compute_buffer(spec, kvd["cells"], s["ubatch"], s["flash"], dv["output_layer"] or bool(copy),
                                                   outs, copy, mask, under=mask_under_logits(spec, s, outs), cpu_attn=attn,
                                                   graph=graph)
                                    if dv["layers"] or dv["output_layer"] or copy or attn else 0)
            dv["total"] = int(dv["weights"] + dv["kv"] + dv["state"] + dv["indexer"] + context + card_margin
                              + dv["compute_buffer"])
        devs[0]["total"] += over.get("projector", 0)
        # the overhead lines are the cards' sums, so that they add up to the same total as the cards
        over.update(compute_buffer=sum(dv["compute_buffer"] for dv in devs), **({"cuda_context": context * len(devs)}
                                                                                 if context else {}))
        if "margin" in over:
            over["margin"] = card_margin * len(devs)
        total = sum(dv["total"] for dv in devs)
        fits = all(dv["total"] <= vram for dv in devs) if vram else None
    return {"kv": kvd, "kv_buffer_pad_per_layer": pad, "kv_buffer_pad": int(kv_pad), "overhead": over, "total": int(total),
            "gpu_weights": int(gpu_w), "devices": devs,
            "gpu_kv": int(gpu_kv), "metal_span": span,
            "fits": fits, "budget": int(vram) if vram else None, "ngl": ngl,
            "host_weights": int(emb + sum(lw[:start]) + (0 if spec.tied or out_on else out) + moved),
            "host_experts": int(moved), "n_cpu_moe": s.get("n_cpu_moe") or len(s.get("cpu_moe_layers") or ())}


def autofit(version, ev) -> list:
    if at_least(version, *FIT) and ev.get("n_cpu_moe"):
        # --n-cpu-moe is a tensor override: common/fit.cpp lowers -c, then stops before placing layers
        return [("--fit on without --n-cpu-moe", "llama.cpp's fit moves MoE experts to host RAM itself; beside "
                 "--n-cpu-moe it only lowers -c ('model_params::tensor_buft_overrides already set by user, abort') "
                 "and the load runs unfitted")]
    if at_least(version, *FIT):
        return [("--fit on", "llama.cpp builds since December 2025 lower -c and -ngl to the free memory themselves "
                 "(the default there); compare its memory breakdown with the figures above")]
    return []
