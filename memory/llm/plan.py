"""The answer to `gpu-garden kv`: weights + KV cache + the runtime's terms, its verdict, the largest context and
the flags that make it fit. Runtime specifics live in runtimes/, the search for what fits (the tries in order of
least change, the largest context) in fit_search.py, the request's checks in plan_checks.py, the weights' sizing in
plan_weights.py, the context a request runs at in runtime_ctx.py, the verdict and the flags of what fits in
plan_verdict.py, the answer's figures and each runtime's fields in plan_answer.py; this module answers, one named step
after another (_plan)."""
import re
from dataclasses import replace

from ..errors import UserError
from ..units import fmt_bytes
from . import fit_search as FS, gguf_repo as GR, gguf_types as GT, plan_checks as PC, plan_weights as PW, unsloth as UD
from . import llamacpp_refusals as LR, weights as W
from .runtime_ctx import (DEFAULT_CTX, OLLAMA_CTX_FLOOR, OLLAMA_OOM_RETRY, _model_ctx, default_ctx,  # noqa: F401
                          ollama_ctx_floor, ollama_retry_ctx, request_ctx)
from .cache import KV_BYTES, LLAMACPP_SWA_ARCHS, norm_kv, SSM_CACHE_DTYPE_FROM, with_ssm_cache_dtype
from .runtimes import at_least, llamacpp as LC, ollama as OL, parse_version, sglang as SG, version_note, vllm as V
from .runtimes import sglang_dp as SGDP, vllm_dp as VDP, vllm_offload as VOFF, vllm_overheads as VO
from .runtimes import vllm_activation as VA, vllm_hybrid as VH
from .runtimes.llamacpp_offload import cpu_attn_bytes
from .runtimes import llamacpp_slots as LS
from .spec import SLIDING, LLMSpec, gguf_blocks
from .plan_verdict import _search, _sizes_only
from .plan_answer import _answer, _gguf_runtime_fields, _vllm_kv_refusal, _vllm_pool_fields

LC_FIT_MIN_CTX = 4096  # common.h fit_params_min_ctx

KNOBS = PC.KNOBS  # the settings plan() takes (plan_checks.py)


def _settings(runtime, vram, ctx, parallel, knobs, spec=None) -> dict:
    version = parse_version(knobs.get("runtime_version"), runtime)
    if runtime == "vllm":
        s = V.settings(version, vram, ctx, knobs)
        if spec is not None and s["v1"]:
            s["max_batched"] = V.prefix_lm_floor(spec, version, knobs, s["max_batched"])
        if parallel > 1 and not knobs.get("max_num_seqs"):  # the command prints --max-num-seqs N (flags.py): its figures
            s["max_seqs"] = parallel
    elif runtime == "llama.cpp":
        s = LC.settings(version, knobs, parallel)
        if spec is not None and knobs.get("override_tensor"):
            if knobs.get("n_cpu_moe") is not None:
                raise UserError("--override-tensor and --n-cpu-moe both place the routed experts: give one")
            one = (knobs.get("num_gpus") or 1) == 1 and len(knobs.get("tensor_split") or ()) <= 1
            # (rev9 D7, checked) ngl is resolved here (PC.read_knobs, LC.resolve_ngl): -1 / auto is None on a --fit
            # build (common/arg.cpp at 69d8e4be line 2343: n_gpu_layers -1, which --fit places; llama-model.cpp line
            # 8079 reads any negative as n_layer + 1 when nothing refits it) or 0 before b5700; -2 / all is ALL_LAYERS.
            # A count holds the output and every layer only above n_layer (i_gpu_start = n_layer + 1 - ngl, line 3031)
            full = knobs.get("ngl") is None or knobs["ngl"] > spec.n_layers + spec.gguf_nextn_blocks
            s["cpu_moe_layers"], s["cpu_moe_biases"] = LC.override_cpu_layers(spec, knobs["override_tensor"],
                                                                              one and full)
            s["cpu_attn_bytes"] = cpu_attn_bytes(spec, knobs["override_tensor"], one and full)
    else:
        s = OL.settings(version, knobs)
    return s


def plan(spec: LLMSpec, runtime: str = "vllm", ctx: int | None = None, parallel: int = 1, kv_dtype: str | None = None,
         weights_dtype: str | None = None, vram: float | None = None, **knobs) -> dict:
    """vram in bytes (None: no verdict; Ollama compares with the free memory it sees). ctx: vLLM --max-model-len,
    llama.cpp -c (shared by the -np slots), Ollama num_ctx (per request). knobs: see KNOBS."""
    PC.check_weights_dtype(weights_dtype)
    out = _plan(spec, runtime, ctx, parallel, kv_dtype, weights_dtype, vram, **knobs)
    if (ctx is None and runtime == "ollama" and vram is not None and not out["fits"] and not out.get("refused")
            and OL.llama_server(parse_version(knobs.get("runtime_version"), runtime))):
        lower = ollama_retry_ctx(out["ctx"])  # out["ctx"]: the automatic tier, already capped at the trained context
        if lower is not None:
            retry = _plan(spec, runtime, lower, parallel, kv_dtype, weights_dtype, vram, **knobs)
            retry["notes"].append(f"num_ctx {out['ctx']} (automatic) does not fit: Ollama "
                                  f"{knobs.get('runtime_version')} retries the load once at the next lower automatic "
                                  f"tier, {lower} (server/sched.go reduceAutoNumCtxForLoadOOM): the figures' context"
                                  + ("" if retry["fits"] else ", which does not fit either: the load fails"))
            retry["ollama_oom_retry"] = {"from": out["ctx"], "to": lower}
            return _parallel_sizes(retry, knobs)
    return _parallel_sizes(out, knobs)


def _parallel_sizes(out, knobs) -> dict:
    """The tensor- and data-parallel sizes the figures are for (one GPU of a TP group; one engine / DP rank), under
    the CLI options' names (--tensor-parallel-size, --data-parallel-size), 1 when not given."""
    from .weights import shown_type
    for d in (out, out.get("model") or {}):  # kv's own name for an Ollama library build is never printed (F8)
        for k in ("weights_dtype", "quant"):
            if d.get(k):
                d[k] = shown_type(d[k])
    from .runtimes.vllm_pool_hint import command_pool
    command_pool(out)  # --kv-cache-memory: the printed command's pool where the request does not fit as asked (F10)
    out["tensor_parallel_size"] = knobs.get("tensor_parallel_size") or 1
    out["data_parallel_size"] = knobs.get("data_parallel_size") or 1
    return out


def _plan(spec: LLMSpec, runtime: str = "vllm", ctx: int | None = None, parallel: int = 1, kv_dtype: str | None = None,
          weights_dtype: str | None = None, vram: float | None = None, **knobs) -> dict:
    """plan() for one context: the request checked, the weights sized, the runtime's figures, then the search."""
    PC.check_names(runtime, knobs)
    PC.refuse_non_gguf_dtype(spec, runtime, weights_dtype)
    fitted = _llamacpp_fit_ctx(spec, runtime, ctx, parallel, kv_dtype, weights_dtype, vram, knobs)
    if fitted is not None:
        return fitted
    PC.refuse_unmodelled(spec, runtime)
    spec, weights_dtype, ud = _given_weights(spec, weights_dtype, knobs)
    if ud:  # an Unsloth Dynamic name alone: the weights are a range (unsloth.py)
        return UD.plan_range(plan, spec, weights_dtype, ud, runtime=runtime, ctx=ctx, parallel=parallel,
                             kv_dtype=kv_dtype, vram=vram, **knobs)
    asked_ngl = PC.read_knobs(runtime, parallel, knobs)
    if runtime == "ollama":  # Ollama prices every block of the GGUF, multi-token-prediction ones included
        spec = gguf_blocks(spec)
    PC.check_vram(vram)  # before request_ctx: Ollama's default num_ctx reads the GPUs' total from it
    spec, ctx, model_max = request_ctx(spec, runtime, ctx, vram, knobs)
    PC.check_ranges(runtime, ctx, vram, knobs)
    fp32 = str(weights_dtype or spec.quant or spec.dtype).lower() in ("fp32", "f32", "float32")  # the model's dtype
    kv = norm_kv(kv_dtype, runtime, spec, fp32_model=fp32)
    PC.refuse_rocm_dsa_fp8(spec, runtime, kv, knobs)
    if knobs.get("kv_dtype_v"):
        knobs["kv_dtype_v"] = norm_kv(knobs["kv_dtype_v"], runtime, spec)
    notes, weights_dtype = _request_notes(spec, runtime, weights_dtype, knobs, asked_ngl)
    PC.dsa_auto_note(spec, runtime, kv_dtype, notes)
    tp = PC.check_parallelism(spec, runtime, knobs)
    spec, notes, skip = PC.quant_skip(spec, knobs, notes)
    spec, notes = PC.quant_group(spec, knobs, notes)
    rank, loras = PC.check_adapters(spec, runtime, knobs, notes)
    fmt, weights_dtype = PW.weights_format(spec, runtime, weights_dtype, notes)
    spec, roles, entry = PW.by_role(spec, runtime, weights_dtype, fmt, tp, skip, knobs, notes)
    spec, notes = _drop_tower_or_state(spec, runtime, knobs, notes)
    if runtime in ("vllm", "sglang"):  # data parallelism: refused where its layout was not read
        (VDP if runtime == "vllm" else SGDP).check(spec, fmt, knobs)
    whole = spec
    spec, roles, proj = PW.towers_and_shards(spec, runtime, weights_dtype, fmt, tp, skip, entry, fp32, rank, loras,
                                             roles, knobs, notes)
    if runtime == "vllm":  # one GPU's routed experts at 1/(tp x dp); a dense model's DP engines are independent
        roles = VDP.apply(spec, weights_dtype, tp, VDP.size(knobs), roles, notes)
    if runtime == "sglang" and VDP.size(knobs) > 1:  # DP attention: attention and the pool per attention group
        roles, spec = SGDP.apply(whole, weights_dtype, tp, VDP.size(knobs), roles, notes, knobs, fmt)
    if runtime == "sglang":  # one static pool, its own rule (runtimes/sglang.py)
        return SG.plan(spec, ctx, kv, roles, vram, knobs, notes)
    s = _runtime_settings(spec, runtime, ctx, parallel, weights_dtype, vram, knobs, notes)
    roles = PW.vllm_load_extras(spec, runtime, fmt, tp, fp32, s, roles, knobs, notes, whole)
    roles, offloaded = VOFF.apply(spec, runtime, tp, fmt, fp32, s, roles, knobs, notes)  # --cpu-offload-gb
    kv = _settings_notes(runtime, kv, s, tp, knobs, notes)
    LR.mla_mixed_types(spec, runtime, kv, s)
    refused, ctx, slot_all = _ctx_limit(spec, runtime, ctx, parallel, model_max, s, knobs, notes)
    if runtime == "llama.cpp":  # after _settings_notes, which may switch flash attention on (ik_llama.cpp's padding)
        _micro_batch_note(s, ctx, knobs, notes)
    _cache_notes(spec, runtime, ctx, parallel, slot_all, s, knobs, notes)

    ev = FS.evaluate(spec, runtime, ctx, parallel, kv, roles, vram, s, proj)
    out = _answer(spec, runtime, ctx, parallel, kv, weights_dtype, roles, vram, s, ev, proj, refused, knobs, notes)
    if offloaded:  # the decoder-layer weights vLLM's --cpu-offload-gb keeps in pinned host RAM (not on the GPU)
        out["host_offloaded"], out["cpu_offload_gb"] = offloaded, knobs["cpu_offload_gb"]
    _vllm_pool_fields(out, runtime, ctx, parallel, vram, s, ev, refused, notes)
    _vllm_kv_refusal(out, spec, runtime, ctx, kv, vram, s, ev, refused)
    _gguf_runtime_fields(out, spec, runtime, ctx, parallel, kv, roles, vram, s, ev, proj, knobs, notes)
    mod = {"vllm": V, "llama.cpp": LC, "ollama": OL}[runtime]
    out["autofit"] = [{"flag": f, "reason": r} for f, r in mod.autofit(s["version"], ev)
                      if not ev.get("free_refused")]  # its own fitting runs after the startup check
    if vram is None:
        return _sizes_only(out, spec, runtime, ctx, parallel, kv, weights_dtype, model_max, s, refused, rank, loras,
                           knobs, notes)
    return _search(out, spec, runtime, ctx, parallel, kv, weights_dtype, roles, vram, model_max, s, ev, proj, refused,
                   rank, loras, knobs, notes)


def _llamacpp_fit_ctx(spec, runtime, ctx, parallel, kv_dtype, weights_dtype, vram, knobs) -> dict | None:
    """-c not given on a llama.cpp --fit build: the plan at the context --fit lowers the model's to; None otherwise."""
    if (ctx is None and runtime == "llama.cpp" and vram is not None and not LC.fork(knobs)
            and default_ctx(spec, runtime, parse_version(knobs.get("runtime_version"), runtime))[1] == "fit"):
        # -c not given on a --fit build: n_ctx_train, lowered by --fit to what fits the memory, not below 4096
        whole = plan(spec, runtime, _model_ctx(spec, runtime), parallel, kv_dtype, weights_dtype, vram, **knobs)
        # the largest context at the settings asked with every layer on the GPU: llama.cpp's fit step interpolates its
        # projected use linearly between the model's context and fit_params_min_ctx and rounds the result down to 256
        # cells ("round down context for CUDA backend"): the largest multiple of 256 that meets the target where the
        # use grows linearly with the context
        best = whole.get("max_ctx_as_asked") or 0
        if best >= whole["ctx"] or whole.get("refused"):
            return whole
        lower = max(LC_FIT_MIN_CTX, min(whole["ctx"], best))  # then its layers move to the CPU (the plan's -ngl)
        out = plan(spec, runtime, lower, parallel, kv_dtype, weights_dtype, vram, **knobs)
        out["notes"].append(f"-c not given: this --fit build starts from the model's {whole['ctx']} and lowers it to "
                            f"fit the free memory, not below {LC_FIT_MIN_CTX}: {lower}")
        return out
    return None


def _given_weights(spec, weights_dtype, knobs) -> tuple:
    """The weights the request names: a GGUF tag's type, the user's size; (spec, weights_dtype, the Unsloth Dynamic
    base type when the weights are only a range, else None)."""
    tag = spec.gguf_tag  # the GGUF repo name's tag (gguf_repo.py) is the file's type
    if tag and weights_dtype is not None and not GR.same_file(weights_dtype, tag, spec.unsloth):
        # the flag wins, said in the tag's note, as over an Ollama library tag (_request_notes); this was refused
        said = re.compile(rf"\b{re.escape(tag)} weights from the tag \(the GGUF file it names\)")
        spec = replace(spec, notes=[said.sub(f"weights sized as {weights_dtype} (--weights-dtype), not as the {tag} "
                                             "file the tag names (llama.cpp -hf / Ollama hf.co load that one)", n)
                                    for n in spec.notes])
    if tag and weights_dtype is None and not spec.weights_bytes and UD.base_type(tag, spec.unsloth):
        weights_dtype = tag  # an Unsloth Dynamic tag: the range below
    size, ud = knobs.pop("weights_bytes", None), UD.base_type(weights_dtype, spec.unsloth)
    types = knobs.pop("gguf_types", None)
    if types is not None and size is not None:
        raise UserError("--gguf-types and --weights-gib both give the weights: give one")
    # an ik_llama.cpp file type (LLAMA_FTYPE_MOSTLY_IQ2_K_R4, ...: its include/llama.h) is named by its base tensor type
    if types is not None and weights_dtype is not None and GR.tag_type(str(weights_dtype)) is None \
            and str(weights_dtype).strip().upper() not in W.IK_TYPES:  # (rev7 D1) no mainline tensor type (Q4_K, F32)
        raise UserError(f"--weights-dtype {weights_dtype} is no GGUF file type, and --gguf-types gives the llama.cpp "
                        f"file's own tensor types: drop --weights-dtype")
    if types is not None:  # the tensor types llama.cpp's loader printed place every tensor (gguf_types.py)
        spec, weights_dtype = GT.given(spec, types, weights_dtype), None
    elif size is not None:  # the user's figure (a file's size as the Hub lists it) is the weights
        spec, weights_dtype = UD.given(spec, size, weights_dtype), None
    elif ud and spec.weights_bytes:  # the GGUF's own tensor table is exact
        weights_dtype = None
    elif ud:  # an Unsloth Dynamic name alone: the weights are a range (unsloth.py)
        return spec, weights_dtype, ud
    if spec.dsv4 and weights_dtype is not None:  # DeepSeek-V4: its checkpoint's own fp8 / MXFP4 mix (deepseek_v4.py)
        from .deepseek_v4 import own_format
        weights_dtype = own_format(spec, weights_dtype)
    return spec, weights_dtype, None


# A --weights-dtype that names a quantization method, not a width: the width is the checkpoint's (vLLM's GPTQConfig /
# AutoGPTQConfig from_config read quantize_config.json's "bits"; TYPE_MAP (8, True) -> uint8b128). Where the name states
# the width as a format of its own (`int8`), the method is sized at the name's width instead of kv's 4-bit gptq (a GPTQ
# name's width, Qwen's `-GPTQ-Int8`, is spec.quant_bits: name_quant.NAME_WIDTHS, and needs no row here). vLLM's
# GPTQ kernels keep the packed int32 qweight at the checkpoint's bits: Exllama's only reorders it in place
# (gptq_shuffle(q, g_idx, bits)), Marlin's repacks it; neither stores it dequantized (read in the July 2026 vLLM tree
# dg1kjd/vllm-v100-sxm2-qwen3.5-397b vendors: auto_gptq.py, kernels/linear/mixed_precision/exllama.py with
# SUPPORTED_QUANT_TYPES uint4b8 and uint8b128; 0.17.1's own GPTQ files were not read). One row a method: the name
# formats it defers to.
METHOD_TAKES_NAME_WIDTH = {"gptq": ("int8",)}


def _request_notes(spec, runtime, weights_dtype, knobs, asked_ngl) -> tuple:
    """The notes the request starts with (the weights' type, -ngl, the version; Ollama's default Q4_K_M)."""
    notes = list(spec.notes)
    if weights_dtype and spec.quant in METHOD_TAKES_NAME_WIDTH.get(str(weights_dtype).lower(), ()):
        notes.append(f"--weights-dtype {weights_dtype} names the method; its width is the checkpoint's, which the name "
                     f"says is {spec.quant}: sized at that width (vLLM's GPTQ kernels keep 8-bit weights packed at 8 bits)")
        weights_dtype = spec.quant
    if weights_dtype and spec.quant and not GR.same_file(weights_dtype, spec.quant, spec.unsloth):  # the dtype used
        from .weights import shown_type  # the notes name a library build by its file type (rev67f F7)
        q = str(shown_type(spec.quant))
        said = re.compile(rf"weights taken as {re.escape(q)} from the name( '[^']*')?")
        notes = [said.sub(lambda m: f"weights sized as {weights_dtype} (--weights-dtype), not as the {q} the name"
                          f"{m.group(1) or ''} says", n) for n in notes]
        tag = re.compile(rf"\b{re.escape(q)} weights from the tag", re.IGNORECASE)  # ollama_tags, gguf_repo
        notes = [tag.sub(f"weights sized as {weights_dtype} (--weights-dtype), not as the {q} the tag names", n)
                 for n in notes]
        build = re.compile(rf"the library's default build, {re.escape(q)}\b")  # an Ollama tag without one
        notes = [build.sub(f"weights sized as {weights_dtype} (--weights-dtype), not as the library's default build, "
                           f"{q}", n) for n in notes]
    from .weights import shown_type  # kv's own names are never printed; a library build is a GGUF (rev67f F6)
    sized = str(shown_type(weights_dtype or spec.quant or spec.dtype))
    if (runtime == "llama.cpp" and not spec.weights_bytes and not GR.tag_type(sized)
            and sized.lower() not in ("mxfp4", "mxfp4_moe")):  # an MXFP4 checkpoint has its llama.cpp file type
        # llama.cpp loads GGUF files, whose tensors hold ggml types: an fp8/AWQ/GPTQ/int8 checkpoint's size is no file's
        notes.append(f"llama.cpp runs GGUF files: the weights above are sized as {sized} "
                     + ("(--weights-dtype)" if weights_dtype else "(the checkpoint's)") + ", a type no GGUF file holds; size the file "
                     "llama.cpp loads with --weights-dtype Q4_K_M (Q8_0, IQ4_XS, ...), --gguf FILE or a GGUF repo name "
                     "(user/repo-GGUF:Q4_K_M)")
    if asked_ngl is not None and knobs["ngl"] != asked_ngl:
        notes.append(f"{'-ngl' if runtime == 'llama.cpp' else 'num_gpu'} {asked_ngl}: "
                     + ("as without it, the runtime's own placement" + (" (--fit)" if runtime == "llama.cpp" else "")
                        if knobs["ngl"] is None else "no layer on the GPU, this build's default" if knobs["ngl"] == 0
                        else "every layer on the GPU"))
    if version_note(knobs.get("runtime_version"), runtime):
        notes.append(version_note(knobs.get("runtime_version"), runtime))
    if runtime == "ollama" and weights_dtype is None and not spec.weights_bytes and not spec.quant:
        weights_dtype = "Q4_K_M"
        notes.append("weights as Q4_K_M, the Ollama library's default build; give --weights-dtype for another tag")
    return notes, weights_dtype


def _no_vision(spec, notes, why) -> tuple:
    """(spec, notes) without the vision tower and the vision-language notes, `why` noted."""
    keep = [n for n in notes if "vision-language" not in n]
    return replace(spec, vision=None, notes=[n for n in spec.notes if "vision-language" not in n]), keep + [why]


def _drop_tower_or_state(spec, runtime, knobs, notes) -> tuple:
    """vLLM's --language-model-only (no vision tower) and the recurrent state's type: vLLM's --mamba-ssm-cache-dtype,
    SGLang's --mamba-ssm-dtype (runtimes/sglang.py ssm_state_bytes)."""
    if knobs.get("language_model_only") and (spec.vision or spec.audio):
        if runtime != "vllm":
            raise UserError("--language-model-only is vLLM's; llama.cpp and Ollama load a tower only from its own file "
                            "(--mmproj / the tag's projector)")
        # vLLM --language-model-only: the tower is not built, so neither loaded nor profiled (syv-ai/qwen38-27b-rtx3090
        # docs/gotchas.md 9: "drops the vision tower cleanly (no weights loaded)")
        towers = " or ".join(t for t, d in (("vision", spec.vision), ("audio", spec.audio)) if d)
        spec, notes = _no_vision(replace(spec, audio=None), notes,
                                 f"--language-model-only: no {towers} tower loaded or profiled")
    limits = V.mm_limits(knobs.get("limit_mm_per_prompt")) if runtime == "vllm" else {}
    if spec.vision and VA.vision_off(spec.vision, spec.arch, limits):  # MM_LIMIT: not built, loaded or profiled
        spec, notes = _no_vision(spec, notes, "--limit-mm-per-prompt sets every modality of the vision tower to 0: "
                                 "not loaded or profiled")
    if spec.audio and limits.get("audio") == 0:
        spec = replace(spec, audio=None)
        notes.append("--limit-mm-per-prompt sets audio to 0: no audio tower loaded")
    if knobs.get("mamba_ssm_cache_dtype") is not None:
        if runtime not in ("vllm", "sglang"):
            raise UserError(f"--mamba-ssm-cache-dtype is vLLM's (SGLang's --mamba-ssm-dtype); {runtime} keeps its own "
                            "state type")
        if runtime == "sglang":  # SGLang sizes its own state pool from the knob (runtimes/sglang.py ssm_state_bytes)
            SG.ssm_state_bytes(knobs["mamba_ssm_cache_dtype"])
            return spec, notes
        key, ver = str(knobs["mamba_ssm_cache_dtype"]).lower(), parse_version(knobs.get("runtime_version"), runtime)
        if key in SSM_CACHE_DTYPE_FROM and not at_least(ver, *SSM_CACHE_DTYPE_FROM[key]):
            first = ".".join(map(str, SSM_CACHE_DTYPE_FROM[key]))
            raise UserError(f"--mamba-ssm-cache-dtype {key} is accepted from vLLM {first} (its MambaDType); "
                            f"vLLM {knobs.get('runtime_version')} refuses it")
        spec = with_ssm_cache_dtype(spec, knobs["mamba_ssm_cache_dtype"])  # the state page and the unified block
    return spec, notes


def _runtime_settings(spec, runtime, ctx, parallel, weights_dtype, vram, knobs, notes) -> dict:
    """The runtime's settings (_settings) and Ollama's batch and flash-attention notes."""
    s = _settings(runtime, vram, ctx, parallel, dict(knobs, weights_format=weights_dtype or spec.quant), spec)
    if runtime == "ollama" and knobs.get("ubatch") and not OL.llama_server(s["version"]):
        # only the llama-server path (>= 0.30) reads num_batch here; the older estimate keeps 512 (GraphSize's batch)
        notes.append(f"num_batch {knobs['ubatch']}: read for Ollama 0.30 and later (llama-server's -b/-ub); this "
                     "release's estimate and runner are sized here at its default 512 (its own num_batch is not modelled)")
    if runtime == "ollama" and knobs.get("flash_attn") is None and OL.default_flash(s["version"], spec, knobs.get("gpu_name")):
        s["flash"] = True
        notes.append(f"flash attention: Ollama {knobs.get('runtime_version')} turns it on for {OL.gguf_arch(spec)} "
                     "by itself (OLLAMA_FLASH_ATTENTION=0 turns it off)")
    if runtime == "vllm" and s.get("moe_backend") not in (None, "auto") and not V.cutlass_fp4(spec, s.get("weights_format"),
                                                                                            s["moe_backend"]):
        notes.append(f"--moe-backend {s['moe_backend']}: kept in the command but has no effect on these figures (kv sizes "
                     "only cutlass, for a MoE model's NVFP4 weights); the profile forward is sized as vLLM's default")
    if runtime == "vllm" and s.get("mm_encoder_tp_mode") == "data":
        read = str((spec.vision or {}).get("model_type") or "") in VA.ENCODER_TP_TOWERS
        notes.append("--mm-encoder-tp-mode data: " + (
            "the vision tower whole on every GPU, each running its whole share of the profile's copies "
            "(vllm_activation.ENCODER_TP_DATA)" if read and s.get("tp", 1) > 1 else
            "no effect on one GPU" if read else
            "kept in the command; this tower's data mode was not read (vLLM runs it where the model supports it, "
            "else weights): sized as weights"))
    return s


def _micro_batch_note(s, ctx, knobs, notes):
    """-ub above the micro-batch llama.cpp runs (LC.micro_batch: min(-c, -b, -ub), ik_llama.cpp's -c padded first):
    the note names the cap that binds, -c (padded on ik_llama.cpp) or -b, and what gives the -ub asked. Only for a -ub
    or -b the user gave: the default -ub 512 under a short -c is llama.cpp's own business."""
    ub, batch, runs = s["ubatch"], s["batch"], LC.micro_batch(s, ctx)
    if runs >= ub or not (knobs.get("ubatch") or (knobs.get("batch") and batch < ub)):
        return
    ik, cap = s.get("ik"), LC.batch_ctx(s, ctx) if ctx else batch  # the context the logical batch is capped at
    needs = ([f"--batch {ub}"] if batch < ub else []) + ([f"a context of at least {ub}"] if cap < ub else [])
    tail = f"; the figures are for {runs} ({' and '.join(needs)} for {ub})"
    name = "ik_llama.cpp" if ik else "llama.cpp"
    if ik and batch < LC.IK_KQ_MASK_PAD:
        notes.append(f"-ub {ub} runs at {runs}: ik_llama.cpp raises -b {batch} to GGML_KQ_MASK_PAD ({runs}) and caps the "
                     f"micro-batch at it{tail}")
    elif cap < batch and cap != ctx:  # ik_llama.cpp's padding changed -c
        notes.append(f"-ub {ub} runs at {runs}: ik_llama.cpp pads -c {ctx} to {cap} (its cache's padding "
                     f"{'with' if s['flash'] else 'without'} flash attention) and caps the logical batch, then the "
                     f"micro-batch, at it{tail}")
    elif cap < batch:
        notes.append(f"-ub {ub} runs at -c {ctx}: {name} caps the logical batch at the context and the micro-batch "
                     f"at it{tail}")
    else:
        notes.append(f"-ub {ub} runs at -b {batch}: {name} caps the micro-batch at the "
                     f"logical batch ({'--batch' if knobs.get('batch') else 'its default'}){tail}")


def _settings_notes(runtime, kv, s, tp, knobs, notes) -> str:
    """Notes on the settings (NCCL NVLS, vLLM's engine, flash attention for a quantized cache); returns the cache
    type the runtime keeps."""
    if runtime == "vllm" and tp > 1 and s.get("nvls") is None and VO.nvls_assumed(s.get("gpu_name")):
        notes.append(f"{fmt_bytes(VO.NON_TORCH_NVLS)} a GPU of NCCL's NVLS buffers counted: {s['gpu_name']} taken as an "
                     "NVSwitch board's (8-GPU HGX/DGX); --nccl-nvls off for a 4-GPU board without NVSwitch or with "
                     "NCCL_NVLS_ENABLE=0, which frees them")
    if runtime == "vllm" and VO.nccl_graphs_unsized(s):
        notes.append(f"CUDA graphs at tensor parallel {tp}: over more than two GPUs without NVLink between every pair vLLM "
                     "turns its custom all-reduce off ('Custom allreduce is disabled because it's not supported on more "
                     "than two PCIe-only GPUs') and the graphs capture NCCL's all-reduce, whose memory depends on the "
                     "driver and the topology, not the model (vllm#5517: 1.1 to 3.8 GiB a GPU), beyond the "
                     f"{fmt_bytes(VO.graph_memory(s))} counted here; vLLM's 'Estimated CUDA graph memory' line gives "
                     "the figure for --cuda-graph-gib, or --enforce-eager captures none")
    if runtime == "vllm" and s["v0_fallback"]:
        notes.append(f"vLLM {knobs.get('runtime_version') or ''} runs this with its {'V1' if s['v1'] else 'V0'} engine "
                     f"({s['v0_fallback']})".replace("vLLM  ", "vLLM "))
    if (runtime == "ollama" and s["version"] is not None and not OL.llama_server(s["version"]) and KV_BYTES[kv] < 2
            and not s["flash"]):
        # Ollama before 0.30 applies OLLAMA_KV_CACHE_TYPE only with flash attention on (llm/server.go NewLlamaServer:
        # set by OLLAMA_FLASH_ATTENTION, or its own engine's default); else it warns and the cache stays f16 -- from
        # 0.13.4 the llama runner's automatic flash attention does not count (OLLAMA_FLASH_ATTENTION must be set)
        notes.append(f"Ollama {knobs.get('runtime_version')} keeps an f16 cache: OLLAMA_KV_CACHE_TYPE={kv} applies only "
                     "with flash attention on, and OLLAMA_FLASH_ATTENTION is not set to 1 (its log: \"quantized kv cache "
                     "requested but flash attention disabled\" or \"OLLAMA_FLASH_ATTENTION must be enabled to use a "
                     "quantized OLLAMA_KV_CACHE_TYPE\"); --flash-attn on for the quantized cache")
        kv = "f16"
    v_type = knobs.get("kv_dtype_v") or kv
    draft = knobs.get("draft_kv_dtype")  # the MTP context runs with the target's flash_attn (-ctvd is its V type)
    LR.quantized_v_without_flash(runtime, v_type, draft, s, knobs)
    if runtime != "vllm" and (KV_BYTES[v_type] < 2 or draft and KV_BYTES[draft] < 2) and not s["flash"]:
        notes.append(f"a quantized V cache needs flash attention in {runtime}: flash attention switched on")
        s["flash"] = True
    return kv


def _ctx_limit(spec, runtime, ctx, parallel, model_max, s, knobs, notes) -> tuple:
    """A context above the model's: vLLM refuses, Ollama lowers it, llama.cpp warns; (refused, ctx, slot_all)."""
    refused = None
    # tokens one llama.cpp slot may hold: before b5913 (ggml-org/llama.cpp#14363) the one cache gave each slot
    # n_ctx_slot = n_ctx / n_parallel (server.cpp init); a unified cache (-kvu) lets any slot use all of -c from b5913 in
    # the library, from b6925 in llama-server (#16736; LS.unified_reach)
    slot_all = LS.slot_all(runtime, s)
    slot_ctx = ctx if slot_all else ctx // parallel
    if runtime == "vllm" and ctx > model_max and (spec.vllm_max_len or spec.max_ctx):
        refused = (f"--max-model-len {ctx} is above the {model_max:,} tokens vLLM derives from the model's config.json: "
                   "it refuses to start (\"User-specified max_model_len is greater than the derived max_model_len\") "
                   "unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, and then positions past it may give wrong output "
                   "(NaN with RoPE); the figures above are that run's; a rope_scaling (YaRN) in config.json raises the "
                   "limit")
        notes.append(refused)
    elif (runtime == "ollama" and spec.max_ctx and ctx > spec.max_ctx and at_least(s["version"], *OL.CTX_CLAMP)
          and (spec.ollama or spec.weights_bytes)):  # the context_length Ollama reads: a library tag's or the GGUF's
        notes.append(f"num_ctx {ctx} is above the model's trained context ({spec.max_ctx:,}): Ollama "
                     f"{knobs.get('runtime_version') or ''} lowers it to {spec.max_ctx:,} (\"requested context size too "
                     "large for model\"), the figures' context".replace("Ollama  ", "Ollama "))
        ctx = spec.max_ctx
    elif runtime == "ollama" and spec.max_ctx and ctx > spec.max_ctx:
        notes.append(f"num_ctx {ctx} is above the described model's context ({spec.max_ctx:,}): "
                     + ("Ollama before 0.9.3 runs it as asked; output past it may degrade" if not at_least(s["version"], *OL.CTX_CLAMP)
                        else "Ollama lowers num_ctx to its GGUF's context_length, which a name alone does not give: "
                             "the figures are for num_ctx as asked (--gguf FILE or the library tag for the clamp)"))
    elif runtime == "llama.cpp" and (note := LS.over_train_note(spec.max_ctx, ctx, parallel, slot_all, s)):
        notes.append(note)  # llama-server caps the slot, the library warns (aud66a F6)
    return refused, ctx, slot_all


def _cache_notes(spec, runtime, ctx, parallel, slot_all, s, knobs, notes) -> None:
    """Notes on the cache's shape: MLA, sliding windows, hybrids, llama.cpp's slots."""
    if spec.mla and runtime == "llama.cpp" and not knobs.get("mla_cache") and LC.mla_build_unknown(s["version"]):
        notes.append(f"llama.cpp {knobs.get('runtime_version')}: the build that moved DeepSeek's cache from full per-head "
                     "K/V to the MLA latent (ggml-org/llama.cpp#12801, merged 2025-04-15) is not pinned here "
                     f"(b{LC.MLA_FULL_UNTIL[0]} and before: full; b{LC.MLA_LATENT_V_FROM[0]} and after: latent+v): taken as "
                     "latent+v; --mla-cache full for a build before April 2025")
    if spec.mla and runtime == "llama.cpp":
        notes.append({"latent": "MLA cache as llama.cpp >= 2026-01 stores it: the 576-value latent only (ggml-org/llama.cpp#19067)",
                      "latent+v": "MLA cache as 2025 llama.cpp builds store it: the latent plus a V cache of kv_lora_rank (a "
                                  "GGUF converted before ggml-org/llama.cpp#12801 keeps full K/V: --mla-cache full)",
                      "full": "MLA cache as llama.cpp builds before early 2025 store it: full per-head K and V "
                              "(40,960 values per token and layer for DeepSeek-V3)"}[s["mla_cache"]])
    if spec.layer_kinds.count(SLIDING):
        if runtime != "vllm" and spec.arch not in LLAMACPP_SWA_ARCHS:
            notes.append(f"the {spec.sliding_window}-token sliding window is not kept by {runtime} for {spec.arch}: full cache counted")
        else:
            notes.append(f"{spec.layer_kinds.count(SLIDING)} of {spec.n_layers} layers use a {spec.sliding_window}-token sliding window")
    if spec.attn_layers < spec.n_layers:
        notes.append(f"hybrid: only {spec.attn_layers} of {spec.n_layers} layers keep a KV cache")
    if runtime == "vllm" and spec.linear_state and s.get("v1") and (note := VH.prefix_note(spec, s)):
        notes.append(note)  # (rev11 S5) worded from vLLM's mamba_cache_mode
    if runtime == "llama.cpp" and parallel > 1:
        # llama-server caps a slot at the trained context (aud66a F6): what one slot holds, split or unified
        reach, per = LS.slot_reach(ctx, spec.max_ctx, s), LS.slot_reach(ctx // parallel, spec.max_ctx, s)
        # -kvu lengthens a slot only where a unified cache gives it all of -c (rev66a R2: not llama-server before b6925)
        kvu = ("" if reach <= per or not LS.unified_reach(s) else
               " (-kvu lets one slot use " + ("all of it)" if reach == ctx else f"up to {reach})"))
        old = ("builds before b5913" if not at_least(s["version"], *LC.UNIFIED_SPLIT) else
               "llama-server before b6925, -kvu or not")
        notes.append(f"-c {ctx} is shared by {parallel} slots" + ((" (unified cache: any slot may use it all)" if reach == ctx
                     else f" (unified cache: any slot may use up to {reach}, the trained context)") if slot_all
                     else f": one cache, each slot at most {ctx // parallel} tokens (n_ctx_slot, {old})"
                     if s["unified"] else f": each slot holds at most {per} tokens{kvu}"))
    if runtime == "llama.cpp" and parallel == 1 and LS.np_printed(s):  # the command names -np 1 (rev66a R1)
        notes.append(f"-np 1 -kvu in the command: without them llama-server b6925-b7432 starts 4 slots sharing the "
                     f"-c {ctx} cache, -np 1 alone too (ggml-org/llama.cpp#17300)" if LS.one_slot_kvu(s) else
                     f"-np 1 in the command: without -np, llama-server (from b6925) starts 4 slots sharing the -c {ctx} "
                     "cache")
