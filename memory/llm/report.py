"""`gpu-garden kv`: the command line and the plan as text."""
import json

from .. import term
from ..errors import UserError
from ..units import GiB, fmt_bytes, parse_size
from . import run_model as RM, spec as llm_spec, unsloth as UD
from .cards import ambiguous_card, visible_gib
from .flags import gpu_layers_words
from .plan_checks import INSTEAD, READ_BY, refused_for
from .runtimes import RUNTIME_NAMES
from .runtimes.sglang import OVERRIDE_ENV as SG_OVERRIDE_ENV
from .runtimes.vllm_pool_hint import check_flag_version


# runtimes whose start fits in the card's free memory rather than its total: a --gpu-name verdict is for an idle card
IDLE_CARD = {"ollama": "Ollama schedules on", "llama.cpp": "llama.cpp allocates in"}


def _vram_bytes(args):
    """(bytes, how) of the memory to fit in: --vram; else the card --gpu-name names (every runtime: its total as torch
    reports it, cards.VISIBLE_GIB, the one table of card totals; Ollama and llama.cpp: a note that the verdict is for an
    idle card; a name of several cards is refused with them); else this machine's first GPU (Ollama: its free memory,
    which Ollama schedules on; the others: its total)."""
    if args.vram is not None:
        return int(args.vram * GiB), None
    name = getattr(args, "gpu_name", None)
    if ambiguous_card(name):
        raise UserError(f"--gpu-name {name!r} names cards of different memory: "
                        + ", ".join(f"{n!r} ({g:.2f} GiB)" for n, g in ambiguous_card(name))
                        + ": give one of them, or --vram GIB")
    gib = visible_gib(name)
    if gib and args.runtime in IDLE_CARD:  # ux50 S6: they fit in the free memory, not the total (llama.cpp: fixR)
        return int(gib * GiB), (f"no --vram: {gib:.2f} GiB, the total torch reports for {RM._a(name)}; {IDLE_CARD[args.runtime]} "
                                "the free memory, so the verdict assumes an idle card (give --vram with the free memory "
                                "for another figure)")
    if gib:
        return int(gib * GiB), (f"no --vram: {gib:.2f} GiB, the total torch reports for {RM._a(args.gpu_name)} "
                                "(give --vram for another figure)")
    # a card name the table does not hold ('4090' for 'RTX 4090', a typo) was passed over without a word
    unknown = (f"--gpu-name {args.gpu_name!r}: kv does not know this card's total memory: give --vram GIB"
               if getattr(args, "gpu_name", None) and not visible_gib(args.gpu_name) else None)  # every runtime
    if unknown:  # (fixX) no verdict (docs/kv.md), not one for this machine's card under another card's name
        return None, unknown
    try:  # this machine's first device, when the probe module has landed and sees a GPU
        from ..budget import probe
        snap = probe.snapshot()
        devs = [d for d in snap.get("devices", []) if d.get("backend") not in (None, "cpu") and d.get("total")]
        if not devs:
            return None, unknown
        key = "free" if args.runtime == "ollama" and devs[0].get("free") is not None else "total"
        return int(devs[0][key]), f"no --vram: this machine's first GPU, its {key} memory" + (f"; {unknown}" if unknown else "")
    except Exception:
        return None, unknown


# kv's exit status as run_cli sets it below; `gpu-garden kv --help` prints it, README and docs/kv.md point there
KV_EXIT_STATUS = (
    "exit status: 0 it fits on the GPU: --ctx tokens for --parallel requests, as asked or with the flags it prints "
    "(another cache type or share, layers left on the CPU); for SGLang, it starts with a KV pool (a note says when "
    "that pool caps a request below --ctx); with no GPU to judge (no --vram, none found), the sizes alone, unless "
    "the runtime refuses; 1 no flags hold --ctx (the flags it prints give the largest context that does, or none "
    "fits at all), or the runtime refuses what was asked (vLLM: --max-model-len above the model's limit; SGLang: --context-length "
    "above it, unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1; llama.cpp: a quantized V cache with --flash-attn off, an MLA "
    "cache with K and V types apart), or vLLM's pool holds fewer than --parallel "
    "requests of --ctx tokens at once (the verdict line says how many), or whether it fits depends on the file (an "
    "Unsloth Dynamic type without --gguf or --weights-gib); 2 usage or input error")


def run_cli(args) -> int:
    if getattr(args, "model", None) and args.model.strip().lower() == "list":
        names = llm_spec.builtin_names()
        if args.json:
            print(json.dumps({"models": names}))
        else:
            print("\n".join(names))
        return 0
    from .kv import describe
    from .plan import plan
    spec = describe(config=args.config, gguf=args.gguf, model=args.model)
    _refuse_unread(args, spec)
    vram, vram_how = _vram_bytes(args)
    knobs = {k: getattr(args, k, None) for k in _CLI_KNOBS}
    fa = getattr(args, "flash_attn", None)
    knobs["flash_attn"] = None if fa in (None, "auto") else fa == "on"
    if getattr(args, "quant_skip", None) is not None:
        knobs["quant_skip"] = [m.strip() for m in args.quant_skip.split(",") if m.strip()]
    if getattr(args, "kv_cache_memory", None):
        knobs["kv_cache_memory"] = int(args.kv_cache_memory * GiB)
        check_flag_version(getattr(args, "runtime", None), getattr(args, "runtime_version", None))  # rev67f F9
        if vram and knobs["kv_cache_memory"] > vram:  # vLLM's --kv-cache-memory-bytes takes bytes; this option GiB
            raise UserError(f"--kv-cache-memory is in GiB: {args.kv_cache_memory:g} GiB is more than the "
                            f"{fmt_bytes(vram)} GPU (for {args.kv_cache_memory:g} bytes give "
                            f"{args.kv_cache_memory / GiB:.2f})")
    knobs["prefix_caching"] = getattr(args, "enable_prefix_caching", None)
    knobs["dp_attention"] = True if getattr(args, "enable_dp_attention", None) else None
    knobs["mla_disable"] = True if getattr(args, "vllm_mla_disable", None) else None
    if getattr(args, "free_gib", None):
        knobs["free_memory"] = int(args.free_gib * GiB)
    if getattr(args, "cuda_graph_gib", None):
        knobs["cuda_graph_memory"] = int(args.cuda_graph_gib * GiB)
    knobs["weights_bytes"] = _weights_size(args)
    res = plan(spec, runtime=args.runtime, ctx=args.ctx, parallel=args.parallel, kv_dtype=args.kv_dtype,
               weights_dtype=args.weights_dtype, vram=vram, **{k: v for k, v in knobs.items() if v is not None})
    if vram_how:
        res["notes"].insert(0, vram_how)
    res["command"] = RM.with_model(res["command"], args, spec)
    for fix in ("parallel_fix", "share_fix"):
        if (res.get(fix) or {}).get("command"):
            res[fix]["command"] = RM.with_model(res[fix]["command"], args, spec)
    RM.ollama_run_line(res, args, spec)
    RM.ollama_tag_note(res, args, spec)
    RM.gguf_serve_note(res, args, spec)
    RM.llamacpp_16bit_note(res, args)
    RM.mmproj_flag_note(res, args, spec)
    if args.runtime == "ollama":  # a Modelfile's FROM where the name given is what runs (rev25 D6)
        res["modelfile_from"], why = RM.modelfile_from(args, spec)  # a Hub checkpoint's id is none (rev26 B1)
        if why:
            res["modelfile_none"] = why
    res["total_all_layers"] = total_all_layers(res)  # the text table's "total on GPU", under its own name
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        print(term.wrap(format_plan(res)))  # prose to the terminal's width; table rows and commands whole (term.py)
    if res["vram"] is None:
        return 1 if res.get("refused") else 0  # the runtime refuses what was asked, whatever the memory
    # fewer requests at once than --parallel (vLLM's concurrency, parallel_held): --ctx x --parallel does not fit as asked
    return 0 if res["fits"] and res.get("parallel_held") is None else 1


_NAMES = RUNTIME_NAMES


def _refuse_unread(args, spec) -> None:
    """One error naming every option the chosen runtime (or the model) does not read (plan_checks.READ_BY, the table
    plan() refuses its settings by)."""
    refused = [(s, k, rts) for s, k, rts in READ_BY if refused_for(args.runtime, s, getattr(args, k, None), rts)]
    unread = [f"--{'no-' if getattr(args, k) is False else ''}{k.replace('_', '-')} ({', '.join(_NAMES[r] for r in rts)})"
              for s, k, rts in refused]
    if unread:
        one = len(unread) == 1
        instead = "".join(f"; {INSTEAD[s, args.runtime]}" for s, _, _ in refused if (s, args.runtime) in INSTEAD)
        raise UserError(f"{_NAMES[args.runtime]} does not read " + ", ".join(unread) + (": drop it, or give the --runtime "
                        "it is for" if one else ": drop them, or give the --runtime they are for") + instead)
    if getattr(args, "mla_cache", None) is not None and not spec.mla:
        raise UserError(f"--mla-cache sizes DeepSeek-style MLA caches; {spec.name} has no MLA (no kv_lora_rank): drop it")
    if getattr(args, "mmproj", None) and not spec.vision:
        raise UserError(f"--mmproj loads a vision projector; {spec.name} is described without a vision tower "
                        "(no vision_config): drop it")


def _weights_size(args):
    """--weights-gib N or --weights-size "17.3GB" (the Hub's decimal units; GiB, MiB, bytes) in bytes, or None."""
    if getattr(args, "weights_gib", None) is not None:
        return int(args.weights_gib * GiB)
    text = getattr(args, "weights_size", None)
    if text is None:
        return None
    if len(text) > 40:
        raise UserError("--weights-size takes a size such as 17.3GB, 16.1GiB or 18576000000")
    try:
        size = parse_size(text)
    except ValueError:
        raise UserError(f"--weights-size {text!r}: not a size (17.3GB as the Hub lists it, 16.1GiB, or bytes)") from None
    if not UD.WEIGHTS_RANGE[0] <= size <= UD.WEIGHTS_RANGE[1]:  # checked here, where the flag the user gave is known
        bare = not any(ch.isalpha() for ch in text)
        raise UserError(f"--weights-size {text!r} is {fmt_bytes(size)}: not a plausible weights size "
                        f"({UD.WEIGHTS_RANGE_TEXT})" + ("; a number alone is bytes: give the unit the Hub lists, e.g. "
                                                        f"{text.strip()}GB" if bare else ""))
    return size


# CLI argument (same name as the plan knob) -> plan knob; flash_attn, kv_cache_memory and quant_skip are converted above
_CLI_KNOBS = ("gpu_memory_utilization", "ubatch", "batch", "ngl", "max_num_batched_tokens", "max_num_seqs", "enforce_eager",
              "mla_cache", "kv_dtype_v", "runtime_version", "mmproj", "gpu_name", "vllm_engine", "vllm_sampler", "moe_backend",
              "vllm_entrypoint", "tensor_parallel_size", "tensor_split", "mem_fraction_static", "num_gpus",
              "pipeline_parallel_size", "pp_layer_partition", "nccl_nvls", "max_lora_rank", "max_loras",
              "mtp_tokens", "speculative_config", "draft_kv_dtype", "language_model_only", "lm_head_dtype",
              "limit_mm_per_prompt", "mm_encoder_tp_mode", "mamba_ssm_cache_dtype", "swa_full_tokens_ratio", "max_mamba_cache_size", "n_cpu_moe", "override_tensor", "gguf_types",
              "swa_full", "kv_unified",
              "cpu_offload_gb", "data_parallel_size", "quant_group", "attention_backend", "llamacpp_entrypoint")

_TERM_HELP = {
    ("vllm", "cuda_context"): "outside --gpu-memory-utilization: must fit in the rest",
    ("vllm", "activation_profile"): "profile forward of max_num_batched_tokens + sampler",
    ("vllm", "non_torch"): "cuBLAS/NCCL workspaces",
    ("vllm", "cuda_graphs"): "0 with --enforce-eager; inside the share from vLLM 0.20",
    ("llama.cpp", "compute_buffer"): "grows with -ub; -fa removes the score matrix",
    ("llama.cpp", "margin"): "left free: fragmentation, driver (--fit builds: its 1 GiB target a GPU)",
    ("ollama", "compute_buffer"): "llama.cpp graph",
    ("ollama", "cuda_context"): "Ollama's per-GPU minimum reserve",
    ("ollama", "metal_reserve"): "Ollama's per-GPU minimum reserve on Metal (no CUDA context there)",
    ("ollama>=0.30", "cuda_context"): "llama-server's CUDA context (Ollama >= 0.30 starts llama-server)",
    ("ollama", "margin"): "llama-server's --fit keeps it free (Ollama >= 0.30)",
    ("ollama", "layer_buffer"): "one layer (+ its KV) Ollama's scheduler holds back",
    ("ollama", "projector_weights"): "vision projector (mmproj), loaded with the model",
    ("ollama", "projector_graph"): "its graph for one image",
    ("ollama", "state_checkpoints"): "copies of each slot's DeltaNet state kept to resume a shared prefix",
    ("llama.cpp", "projector"): "--mmproj: vision projector + its graph",
    ("sglang", "cuda_context"): "before SGLang measures its free memory",
    ("llama.cpp", "mtp_state_snapshots"): "draft-mtp: the recurrent state kept --spec-draft-n-max more times",
    ("llama.cpp", "mtp_draft_kv"): "draft-mtp: the MTP context's own cache of the MTP layer (-ctkd/-ctvd; f16 by default)",
    ("sglang", "nccl"): "tensor parallelism's communicator buffers",
}


def _host_embedding(r: dict) -> int:
    """llama.cpp and Ollama keep the token table in host RAM (a tied one is copied to the GPU as the output layer)."""
    return r["weights_by_role"]["embedding"] if r["runtime"] in ("llama.cpp", "ollama") else 0


def total_all_layers(r: dict) -> int:
    """The table's "total on GPU": the sum of the GPU lines it prints, every layer on the GPU (the plan's `total` is
    what the verdict checks: vLLM's share plus what sits outside it, or a partial offload's layers). With vLLM's fixed
    pool (--kv-cache-memory) it is the verdict's figure: the pool, not one request's cache, is on the GPU, and the
    profile's activations are freed before it is allocated (the larger of that peak and the started footprint)."""
    if r["runtime"] == "vllm" and r.get("pool_fixed"):
        return r["total"]
    return ((r["weights_gpu_full"] if _host_embedding(r) else r["weights"]) + r.get("kv_buffer", r["kv_total"])
            + sum(r["overhead"].values()))


def _refusal_line(r, ref) -> str:
    """What vLLM prints instead of its pool line when one request does not fit the pool (plan_answer._vllm_kv_refusal)."""
    if ref["engine"] == "v0":
        return (f"KV pool {fmt_bytes(max(r['kv_capacity_bytes'], 0))}: vLLM refuses to start: \"The model's max seq len "
                f"({r['ctx']}) is larger than the maximum number of tokens that can be stored in KV cache ({ref['tokens']})\"")
    est, printed = ref.get("estimated_max_len"), ref.get("estimate_printed", "unknown")
    tail = ""
    if est and printed == "figure":
        tail = f"; it prints \"the estimated maximum model length is {est}\""
    elif est and printed == "blank":  # vllm#16168's bare f-string, fixed by vllm#18966 (0.9.1)
        tail = (f"; this build prints \"Based on the available memory,\" without the figure (vllm#18966 added it in "
                f"0.9.1; it would be {est})")
    elif est and printed == "unknown":
        tail = (f"; it prints \"the estimated maximum model length is {est}\" (vLLM 0.9.1 on; 0.8.4-0.9.0 print "
                "\"Based on the available memory,\" without the figure, older V1 builds neither)")
    pool, where = r["kv_capacity_bytes"], ""
    if ref.get("stage") is not None and r.get("pp_stages"):  # the pipeline stage whose check raises, not rank 0's table
        from .runtimes.vllm_pipeline import stage_words
        pool, where = r["pp_stages"][ref["stage"]]["pool"], f" (on {stage_words(ref['stage'], r['pp_stages'])})"
    return (f"KV pool {fmt_bytes(max(pool, 0))}{where}: vLLM refuses to start: one request of {r['ctx']:,} "
            f"tokens needs {ref['needed_bytes'] / 2**30:.2f} GiB of KV cache, more than the available "
            f"{ref['available_bytes'] / 2**30:.2f} GiB" + tail)


def _stage_words(i, stages) -> str:
    from .runtimes.vllm_pipeline import stage_words
    return stage_words(i, stages)


def _deciding_stage(r, heaviest=False) -> dict | None:
    """vLLM's pipeline stage the verdict is about (plan.py's pp_deciding_stage, the least KV pool left) with its words;
    heaviest: the stage holding the most weights instead (a 'weights alone' verdict's, rev23 B1)."""
    i = r.get("pp_deciding_stage")
    if i is None or not r.get("pp_stages"):
        return None
    from .runtimes.vllm_pipeline import heaviest_stage, stage_words
    i = heaviest_stage(r["pp_stages"]) if heaviest else i
    return dict(r["pp_stages"][i], words=stage_words(i, r["pp_stages"]))


def _compromise_words(r) -> str:
    """What a 'fits' verdict gives up, on its own line (ux50 S7): layers left on the CPU with the weights they keep in
    system RAM (kv takes no host-RAM figure to check them against), or fewer vLLM requests at once than --parallel."""
    if not r["fits"]:
        return ""
    layers, host = r.get("gpu_layers_used"), r.get("host_weights") or 0
    if r["runtime"] in ("llama.cpp", "ollama") and layers is not None:
        words = gpu_layers_words(layers, r["model"]["layers"], r["runtime"], r.get("ngl_counts_output"))
        if not words.startswith("all "):
            said = words + " on the GPU, as asked" if r.get("ngl_as_asked") else "only " + words + " on the GPU"
            return (f": {'no layer on the GPU' if layers <= 0 else said}; ~{fmt_bytes(host)} of weights stay "
                    "in system RAM and run on the CPU (much slower; kv takes no host-RAM figure, so that is not checked)")
    held = r.get("parallel_held")
    if held is not None:
        fix = r.get("parallel_fix")
        return (f", but holds only {held:.2f} of the {r['parallel']} requests of {r['ctx']:,} tokens at once"
                + (f" ({fix['flag']} holds {fix['concurrency']:.2f})" if fix else ""))
    return ""


def _pool_words(r) -> str:
    """'KV pool X' beside vLLM's printed tokens: under pipeline parallelism the pool of the stage holding the fewest tokens,
    named (vLLM prints every stage's least: vllm_pipeline), not rank 0's beside another stage's tokens (rev25 S5)."""
    stages = r.get("pp_stages") or ()
    if not stages or any(st.get("pool_tokens") is None for st in stages):
        return f"KV pool {fmt_bytes(max(r['kv_capacity_bytes'], 0))}"
    i = min(range(len(stages)), key=lambda k: stages[k]["pool_tokens"])
    return f"KV pool {fmt_bytes(max(stages[i]['pool'], 0))} on {_stage_words(i, stages)} (the fewest tokens)"


def _prints_rs_buffer(r) -> bool:
    """llama.cpp, and Ollama from 0.30.0-rc0 (llama-server), print a hybrid model's KV and recurrent-state buffers on
    two lines ("KV buffer size", "RS buffer size"; rev4 D1)."""
    if r["runtime"] == "llama.cpp":
        return True
    from .runtimes import ollama as OL, parse_version
    return r["runtime"] == "ollama" and OL.llama_server(parse_version(r.get("runtime_version"), "ollama"))


def format_plan(r: dict) -> str:
    r = dict(r, total_all_layers=r.get("total_all_layers") or total_all_layers(r))
    m = r["model"]
    lines = []
    kinds = ", ".join(f"{v} {k}" for k, v in m["layer_kinds"].items())
    if m.get("compress_ratios"):  # DeepSeek-V4: its layers as vLLM builds them (deepseek_v4.layer_caches)
        kinds = f"all sliding, window {m['sliding_window']}" + "".join(
            f"; {n} also compressed {r}x" for r, n in m["compress_ratios"].items() if r != "1")
    geo = (f"MLA latent {m['mla']['kv_lora_rank']}+{m['mla']['qk_rope_head_dim']}" if m["mla"]
           else f"{m['kv_heads']} KV heads x {m['head_dim']}")
    lines.append(f"{m['name']} ({m['arch']}): {m['layers']} layers ({kinds}), {geo}"
                 + (f", {m['experts']} experts" if m["experts"] else ""))
    ver = f" {r['runtime_version']}" if r.get("runtime_version") else " (newest)"
    if r["runtime"] == "ollama" and not r.get("runtime_version"):  # runtimes/ollama.py llama_server(None) is False
        ver = " (no version: sized as Ollama's own engine, 0.29's; --runtime-version 0.30 or later for llama-server)"
    what = {"vllm": f"--max-model-len {r['ctx']:,}, {r['parallel']} request(s) at once",
            "llama.cpp": f"-c {r['ctx']:,} shared by {r['parallel']} slot(s)",
            "ollama": f"num_ctx {r['ctx']:,} x {r['parallel']} parallel",
            "sglang": f"--context-length {r['ctx']:,}"}[r["runtime"]]
    lines.append(f"runtime {r['runtime']}{ver}, {what}, KV cache {r['kv_dtype']}")
    lines.append("")
    w = 20

    def row(label, value, how=""):
        lines.append(f"  {label:<{w}}{fmt_bytes(value):>11}   {how}".rstrip())

    row("weights", r["weights"], r["weights_how"])
    if r.get("host_offloaded"):  # vLLM --cpu-offload-gb: the weights line is the GPU's share
        row("  in host RAM", r["host_offloaded"], f"--cpu-offload-gb {r['cpu_offload_gb']:g}: decoder-layer weights in "
            "pinned host memory (not on the GPU; not in the weights line)")
    host = _host_embedding(r)
    if host:  # llama.cpp and Ollama keep the token table in RAM; a tied one is copied to the GPU as the output layer
        tied = r["weights"] - host == r["weights_by_role"]["blocks"] and r["weights_by_role"]["output"]
        # tied: the weights line counts the table once (as the GPU's output layer); the host row is a second copy,
        # so the two rows below add up to more than the weights line, and the host row says so (ux21b)
        row("  in host RAM", host, "a second copy of the token table (the weights line counts it once, "
            "as the GPU's output layer); not on the GPU" if tied else "token embedding (not on the GPU)")
        if r.get("host_experts_full"):
            row("  experts, host RAM", r["host_experts_full"],
                (f"-ot: the routed experts (ffn_gate/up/down_exps) of {r['n_cpu_moe']} layers, "
                 + ", ".join(map(str, r["cpu_moe_layers"])) + " (not on the GPU)") if r.get("cpu_moe_layers") is not None else
                f"--n-cpu-moe {r['n_cpu_moe']}: the routed experts (ffn_gate/up/down_exps) of the first "
                f"{r['n_cpu_moe']} layers (not on the GPU)")
        row("  on the GPU", r["weights_gpu_full"],
            "the blocks + the output layer" + (" (a copy of the tied embedding)" if tied else "")
            + (", less those experts" if r.get("host_experts_full") else ""))
    kv_how = f"{fmt_bytes(r['kv_per_token'])} per token"
    if r["kv_detail"]["sliding_layers"]:
        kv_how += f", sliding layers {fmt_bytes(r['kv_detail']['sliding_layers'])}"
    state = r["kv_detail"]["recurrent_state"]
    if state and _prints_rs_buffer(r) and r["kv_total"] > state:  # llama_kv_cache and llama_memory_recurrent apart
        log = "llama.cpp's log" if r["runtime"] == "llama.cpp" else "Ollama's llama-server log"  # Ollama >= 0.30
        kv_how = f"KV buffer {fmt_bytes(r['kv_total'] - state)} + RS buffer {fmt_bytes(state)} ({log} prints each), {kv_how}"
    elif state:
        kv_how += f", recurrent state {fmt_bytes(state)}"
    label = "KV, one request" if r["runtime"] in ("vllm", "sglang") else "KV cache"
    fixed = r["runtime"] == "vllm" and r.get("pool_fixed")
    if fixed:  # the pool is what sits on the GPU; one request's need is what the pool must hold
        need = r.get("kv_request_bytes") or r["kv_total"]  # the blocks vLLM's pool must hold for it (review16b F4)
        row("KV pool (fixed)", r["kv_capacity_bytes"], f"--kv-cache-memory; one request {fmt_bytes(need)}, {kv_how}")
    elif r.get("kv_buffer_pad"):  # (rev7 B5) llama.cpp's "KV buffer size" line: the cache and its padded rows
        row(label, r["kv_buffer"], f"{kv_how}, with the CUDA buffer's padded rows of a quantized cache "
            f"{fmt_bytes(r['kv_buffer_pad'])}")
    else:
        row(label, r["kv_total"], kv_how)
    rt = "ollama>=0.30" if r["runtime"] == "ollama" and "margin" in r["overhead"] else r["runtime"]  # --fit's margin
    for k, v in r["overhead"].items():
        how = _TERM_HELP.get((rt, k)) or _TERM_HELP.get((r["runtime"], k), "")
        if k == "compute_buffer" and r.get("ollama_flash_shrinks_graph"):  # off, and the card and model take it
            how += "; OLLAMA_FLASH_ATTENTION=1 shrinks it"
        row(k.replace("_", " "), v, how)
    total = r["total_all_layers"]
    row("total on GPU", total, "the lines above, every layer on the GPU" if host else
        "the larger of the profile peak (weights + activations) and the started footprint (weights + pool + the rest)"
        if fixed else "")
    if r.get("partial_graph_extra"):  # Ollama's verdict: its placement check sizes the graph for a partial offload
        row("  placement check", total + r["partial_graph_extra"],
            f"+ {fmt_bytes(r['partial_graph_extra'])}: Ollama sizes the graph for a partial offload and checks this "
            "against free memory" + ("; the verdict below" if r["vram"] else ""))
    if r.get("ollama_total_memory"):  # what its log calls total memory: the reserve and the buffer are not allocated
        row("  'total memory'", r["ollama_total_memory"], "Ollama's log line of that name (0.12.11-0.29, in place of "
            "memory.required.full): weights + KV + graph; the minimum reserve and the buffer layer are held back, "
            "not allocated")
    layers = r.get("gpu_layers_used")
    if layers is not None and not r["vram"]:  # -ngl / num_gpu given: what those layers take
        lines.append(f"  with {gpu_layers_words(layers, m['layers'], r['runtime'], r.get('ngl_counts_output'))} on the "
                     f"GPU: {fmt_bytes(r['total'])} there, the rest in host RAM")
    advice = r.get("no_fit_reason")
    if r["vram"]:
        lines.append("")
        pool = r.get("kv_capacity_bytes")
        stage = _deciding_stage(r)  # pipeline parallelism: the stage left the least pool decides, not rank 0's table
        pool = stage["pool"] if stage else pool
        share_full = r["runtime"] in ("vllm", "sglang") and pool is not None and pool <= 0
        if r.get("depends"):  # an Unsloth Dynamic name alone: the two ends of its weights disagree (unsloth.py)
            lines.append(f"on {fmt_bytes(r['vram'])}: {r['depends']}"
                         + ("; with the flags below it fits at either end" if r["fits"] else ""))
        elif share_full:  # nothing left for a KV cache: the weights (and what sits beside them) are the verdict
            heavy = _deciding_stage(r, heaviest=True)  # a pipeline's weights alone: the stage holding the most
            weights = heavy["stage_weights"] if heavy else r["weights"]
            what = ("weights alone", weights) if weights > r["budget"] else (
                "weights + profile activations, workspaces", r["budget"] - pool)
            share = "vLLM's share" if r["runtime"] == "vllm" else "SGLang's static share (--mem-fraction-static)"
            where = ("" if not stage else f" on the pipeline stage with the most weights ({heavy['words']})"
                     if weights > r["budget"] else f" on the deciding pipeline stage ({stage['words']})")
            lines.append(f"on {fmt_bytes(r['vram'])}: does NOT fit: {what[0]} {fmt_bytes(what[1])}{where} > {share} "
                         f"{fmt_bytes(r['budget'])} of {fmt_bytes(r['vram'])}")
            if advice:
                lines.append(advice[0].upper() + advice[1:])
        else:
            verdict = "fits" if r["fits_as_requested"] else ("fits with the flags below" if r["fits"] else "does NOT fit")
            if r.get("refused") and r["runtime"] == "sglang":  # runtimes/sglang._context_limit: the command sets the variable
                verdict = (f"SGLang refuses --context-length {r['ctx']:,} (above the model's {r['context_limit']:,}: see "
                           f"the note); with {SG_OVERRIDE_ENV}=1, as the command below sets it, it "
                           + ("fits" if r.get("fits_with_override") else "does NOT fit"))
            elif r.get("refused"):  # above the model's limit (plan.py): the memory is not what stops it
                verdict = (f"vLLM refuses --max-model-len {r['ctx']:,} (above the model's limit: see the note)"
                           + ("; the flags below keep to the limit" if r.get("chosen") else ""))
            verdict += _compromise_words(r)
            limit = r.get("context_limit") if r["runtime"] == "sglang" else None
            if limit and r["ctx"] > limit and not r.get("refused"):  # a --runtime-version: the refusal not read for it
                verdict += (f" (above the model's {limit:,}: SGLang "
                            + ("refuses it unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1" if r.get("context_check")
                               else "may refuse it") + ", see the note)")
            budget = ((f" (fixed KV pool {fmt_bytes(r['kv_capacity_bytes'])}, --kv-cache-memory)" if r.get("pool_fixed")
                       else f" (vLLM share {fmt_bytes(r['budget'])})") if r["runtime"] == "vllm" else "")
            cards = f"{len(r['devices'])} x " if r.get("per_gpu") else ""  # llama.cpp: each of N cards judged on --vram
            lines.append(f"on {cards}{fmt_bytes(r['vram'])}{budget}: {verdict}")
        ref = r.get("vllm_refusal")
        if ref and ref["engine"] == "v0" and r.get("vllm_would_print") and not share_full and not r.get("depends"):
            # V0 logs its blocks (and from 0.6.3 the concurrency) before raise_if_cache_size_invalid
            lines.append(f"{_pool_words(r)}: vLLM prints \"{r['vllm_would_print']}\", "
                         "then refuses to start")
        if ref and not share_full and not r.get("depends"):
            lines.append(_refusal_line(r, ref))
        elif r.get("vllm_would_print") and not share_full and not r.get("depends"):
            lines.append(f"{_pool_words(r)}: vLLM would print \"{r['vllm_would_print']}\"")
            started = r.get("started_bytes")
            if r["fits_as_requested"] and r.get("pool_fixed") and started is not None and r["total"] > started:
                lines.append(f"vLLM peaks at {fmt_bytes(r['total'])} while profiling (the weights and the profile's "
                             f"activations, freed before the pool); once started it holds {fmt_bytes(started)}: the "
                             "weights, the fixed KV pool and what sits outside PyTorch's peak")
            elif r["fits_as_requested"] and r.get("pool_fixed"):  # --kv-cache-memory: the share sizes nothing
                lines.append(f"vLLM takes {fmt_bytes(r['total'])} once started: the weights, the fixed KV pool and what "
                             "sits outside PyTorch's peak (the profile's activations are freed before the pool)")
            elif r["fits_as_requested"]:
                lines.append(f"vLLM takes {fmt_bytes(r['total'])} once started: its share, the KV pool filling what the "
                             f"rest leaves, + {fmt_bytes(r['total'] - r['budget'])} outside it")
        ch = r.get("chosen")
        if ch and (not r["fits_as_requested"] or r.get("gpu_layers_used") is not None):
            where = (", " + gpu_layers_words(r["gpu_layers_used"], m["layers"], r["runtime"], r.get("ngl_counts_output"))
                     + " on the GPU") if r.get("gpu_layers_used") else ""
            at = (" on " + _stage_words(ch["pp_stage"], r["pp_stages"])) if ch.get("pp_stage") is not None else ""
            lines.append(f"with the flags: {ch['ctx']:,} tokens, KV cache {ch['kv_dtype']}{where}: "
                         f"{fmt_bytes(ch['total'])} on the GPU (KV " + (
                             f"{fmt_bytes(ch['kv_gpu'])} of {fmt_bytes(ch['kv_total'])} on the GPU)"
                             if ch.get("kv_gpu") is not None and ch["kv_gpu"] != ch["kv_total"]
                             else f"{fmt_bytes(ch['kv_total'])}{at})"))
        if r["max_ctx_by_kv_dtype"] and not share_full:
            per = {"vllm": " (--max-model-len)", "llama.cpp": " (-c)", "ollama": " (num_ctx)",
                   "sglang": " (the pool, max_total_num_tokens)"}[r["runtime"]]
            if r["runtime"] == "sglang" and r.get("context_limit") and r["kv_capacity_tokens"] > r["context_limit"]:
                per = (f" (--context-length: the model's limit; the pool, max_total_num_tokens, holds "
                       f"{r['kv_capacity_tokens']:,} tokens for all requests)")
            parts, layers = [], r.get("max_ctx_layers", {})
            # the plan offloads layers (aud66a F5): the line is labelled as every layer on the GPU and the plan's own
            # count follows, unless every figure is already at the plan's count (each then says so)
            at_plan = r.get("max_ctx_at_plan_layers") if not all(layers.get(k) for k in r["max_ctx_by_kv_dtype"]) else None
            for k, v in r["max_ctx_by_kv_dtype"].items():
                ngl = layers.get(k)
                words = gpu_layers_words(ngl, m["layers"], r["runtime"], r.get("ngl_counts_output")) if ngl else ""
                parts.append(f"{k} none" if ngl and at_plan else
                             f"{k} {v:,}" + (f" with only {words} on the GPU (partial offload)" if ngl else ""))
            if r.get("max_ctx_util"):  # computed at another share than the run's (plan_verdict._max_ctx_table)
                per = per[:-1] + f", at --gpu-memory-utilization {r['max_ctx_util']:.2f})"
            if not any(r["max_ctx_by_kv_dtype"].values()) and r.get("no_fit_reason"):  # "f16 0, q8_0 0" read as if
                parts = ["none at these settings (the note names what would fit)"]  # no context fits (rev54)
            name = "-ngl" if r["runtime"] == "llama.cpp" else "num_gpu"
            if at_plan:
                per += " with every layer on the GPU"
            elif r.get("ngl_as_asked") and r.get("gpu_layers_used") is not None:  # at the user's own count, 0 too
                per += f" at {name} {r['gpu_layers_used']} as asked"
            lines.append(f"largest context{per}: " + ", ".join(parts))
            if at_plan:
                words = gpu_layers_words(r["max_ctx_plan_ngl"], m["layers"], r["runtime"], r.get("ngl_counts_output"))
                lines.append(f"  at the plan's {name} {r['max_ctx_plan_ngl']} ({words} on the GPU): "
                             + ", ".join(f"{k} {v:,}" for k, v in at_plan.items()))
    if r["flags"]:
        lines.append("")
        # the verdict names a change that holds --parallel (parallel_fix): the command as asked is labelled so, and the
        # change's own command follows it (ux57)
        fix = r.get("parallel_fix") if (r.get("parallel_fix") or {}).get("command") else None
        if fix:
            kv = (r.get("chosen") or {}).get("kv_dtype", r["kv_dtype"])
            lines.append(f"as asked, {kv} KV (holds {r['parallel_held']:.2f} of the {r['parallel']} requests):")
        lines.append("  " + r["command"])
        for f in r["flags"]:  # a setting of the user's kept: say so, and why
            if f["reason"].startswith("yours, kept"):
                lines.append(f"  ({f['text']}: {f['reason']})")
        if fix:
            lines.append(f"with {fix['kv_dtype']} KV (holds {fix['concurrency']:.2f} of the {r['parallel']} requests):")
            lines.append("  " + fix["command"])
        run = r.get("model_to_run")  # the name given loads another file than the figures' (run_model.py)
        params = [f["text"] for f in r["flags"] if f["kind"] == "param"] if r["runtime"] == "ollama" else []
        # PARAMETER lines only in a whole Modelfile, under a FROM: the file the figures are for, else the name given
        # (a lone PARAMETER line was printed where the tag was already right: rev25 D6); `ollama run NAME` applies none
        src = (run["model"], run["why"], run["command"]) if run and run.get("model") else (
            (r["modelfile_from"], "the name given", f"ollama run {r['modelfile_from']}")
            if not run and r.get("modelfile_from") else None)
        if src and params:
            lines.append(f"  FROM {src[0]}  ({src[1]})")
            lines += [f"  {p}" for p in params]
            lines.append(f"  (the FROM and PARAMETER lines are a Modelfile: `ollama create NAME -f Modelfile`, then "
                         f"`ollama run NAME`; `{src[2]}` alone applies no PARAMETER line)")  # `...`: whole when wrapped
        elif run:
            lines.append(f"  {run['command']}  ({run['why']})" if run["command"] else f"  (no tag to run: {run['why']})")
        elif r.get("modelfile_none"):
            lines.append(f"  (no Modelfile or ollama run line: {r['modelfile_none']})")
    fix = r.get("share_fix")
    if fix and not r["flags"]:  # nothing fits at the user's share: the command at the one the note names (plan_verdict)
        lines += ["", f"with {fix['flag']} (holds {fix['ctx']:,} tokens):", "  " + fix["command"]]
    for a in r.get("autofit") or []:
        # the flag on a line of its own, its reason as prose under it (term.wrap wraps that, never the flag's line)
        lines += [f"  or let the runtime fit itself: {a['flag']}", f"    ({a['reason']})"]
    for n in r["notes"]:
        if n != advice or not r["vram"] or not share_full:
            lines.append(f"note: {n}")
    return "\n".join(lines)
