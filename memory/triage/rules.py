"""THE PLACE WHERE A CAUSE IS DECIDED: every rule of triage, one row each, grouped by cause.

Row format: `Rule(cause, weight, when, evidence, hint=False, first=None)`

- `cause`    one of CAUSES (the fixed vocabulary the guides are written for), or LEADER in the
             fallbacks section (the cause leading at that point).
- `weight`   points the row adds to its cause when it fires. A failure's causes are ranked by their
             points; confidence = points / (all points + rank.NOT_DETERMINED) (rank.py).
- `when`     a predicate over the failure's `Case` (case.py: the allocator's numbers under common names
             `req`, `total`, `free`, `allocated`, `others`, `ru`, ...; the `branch` of the message kind;
             the `node_cause` of the failing node; the traceback's `frame_cause`/`entry_cause`; the
             `log_phase` ComfyUI's log shows; earlier runs). A field the failure does not have reads as None.
             `x.scored` holds the points given so far (rows above this one).
- `evidence` the sentence shown beside the cause: a template filled from the Case (`{req:b}` prints
             bytes, `{req_share:.0%}` a percentage, `{n[kv_needed]:b}` a number of the message), or a
             function of the Case.
- `hint=True` the weight is multiplied by the Case's `hint` (0.3 when ComfyUI's Dynamic VRAM failed,
             where the phase clues say little; else 1).
- `first="g"` rows sharing a group are alternatives: only the first matching one (top to bottom) fires.

Named predicates and thresholds that several rows share live in predicates.py (no weights there); the row type and
the cause vocabulary in rule_row.py; the *other* section's rows (the driver, the platform, a runtime's own limit) in
rules_other.py, the *weights-exceed-vram* section's in rules_weights.py, the *host-ram* section's in rules_host.py, the
*vae-decode* and *text-encoder* sections' in rules_stages.py, the *kv-cache* section's in rules_kv.py, *other-process*
rows a runtime's own line decides in rules_process.py, and the *graph-capture* rows PyTorch's message decides in
rules_capture.py, spliced in at their place.

Rows are read top to bottom: the cause sections in CAUSES order, then the fallbacks, which look at
what the sections scored. Adding a rule means adding a row; a unit test checks every row's cause is
known and has a guide on every runtime (tests/unit/test_triage_guides.py).
"""
from ..units import GiB, MiB, fmt_bytes
from .predicates import (ABSURD_HOST, metal_kv_profile_peak, OWN_POOLS, SLIVER, TRT_KV, TRT_WEIGHTS, async_full, async_numbers, big_request, big_slack,
                         context_call, fresh, gap_others, host, kind, mem_query, mps_full, others_hold,
                         outside_others, slack_fits, slack_passed, stage, stage_said, startup_free_says, tgi, tgi_figures, tgi_tiny, torch,
                         torch_cut, torch_full, trt_component, trt_free, trt_kv_starved)
from .rule_row import CAUSES, LEADER, Rule, evidence, requested_free  # noqa: F401  (CAUSES and evidence are read through this module)
from .rules_capture import CAPTURE_AFTER_KV, CAPTURE_POOLS
from . import mps_other
from .fallback_slack import slack_on_card
from .rules_host import HOST_RAM
from .rules_kv import KV_CACHE
from .rules_libs import LIB_WORKING
from .rules_other import OTHER
from .rules_process import RUNTIME_HELD
from .native_abort import NATIVE_ABORT_ROWS
from .bfc_backpedal import BACKPEDAL_ROWS     # (tri87)
from .rules_runner_up import RUNNER_UP_ROWS
from .rules_stages import STAGES
from .rules_weights import WEIGHTS
from .deepspeed_zero3 import ROWS as ZERO3_ROWS     # (aud68c #9)
from .should_fit import over_card
from .tiny_shared import TINY_SHARED
from .own_outside import others_outweigh_own     # (tri88) the two others' rows stand aside where this process holds more outside PyTorch
from .native_runtimes import FAISS_TEMP_MIN, mnn_parameter
from .predicates import batch_ran_before, step_mem_grew     # (rev9 S1) by line; (tri65) by line
from .wrapper_runs import run_mem_grew, same_run_before     # (fix67b) by line

R = Rule
OLLAMA_EVICT_WITHIN = 40      # lines from a failed load to the scheduler's eviction that answers it
RULES = [
    # --- fragmentation: PyTorch's cache has the room, not in one piece ---------------------------------
    # (fix66d) the two slack rows that decide it not under a Windows sysmem spill (fallback_slack.py): the card was overrun
    # before the slack mattered; the sliver rows (1.4) stay, under the sysmem row (1.45) as that row was set
    # the slack is many times the request: the cache had ample room; the frame only says which request failed
    # (round 71) under PyTorch <= 2.0's message a slack of 16x the request no longer stands in for a quarter of the card
    # (big_slack): every old-message case it decided was a batch or a sequence length too long (batch 111's three
    # fine-tunes, batch 165's sentence-transformers batch), and the card full of live tensors (85 % or more allocated)
    R("fragmentation", 3.0, lambda x: slack_on_card(x) and x.ru >= 4 * x.req and big_slack(x) and (not x.training or x.ru >= 0.5 * (x.allocated or 0)),
      lambda x: f"the unallocated cache ({fmt_bytes(x.ru)}) is {x.ru / x.req:.1f}x the request: the allocator could not find one piece"),
    # in training, slack about the size of the request is the churn of the step's own tensors: the batch is the knob
    R("fragmentation", 3.2, lambda x: slack_on_card(x) and big_slack(x) and (not x.training or x.ru >= 0.5 * (x.allocated or 0)),
      "{ru:b} reserved by PyTorch but unallocated >= the {req:b} requested: the cache has room, but not in one piece", first="frag"),
    # a sliver of the card (under SLIVER): the card is full of live tensors, fragmentation only decided which request failed
    R("fragmentation", 1.4, slack_fits,
      "{ru:b} reserved by PyTorch but unallocated >= the {req:b} requested: the cache has room, but not in one piece", first="frag"),
    R("fragmentation", 1.4, lambda x: (torch(x) and not x.impossible and not x.tiny and x.ru is not None and x.req and x.ru >= 0.5 * x.req
                                       and x.ru >= 256 * MiB and x.ru >= 0.08 * x.total),
      "{ru:b} reserved but unallocated, {ru_share:.0%} of the card", first="frag"),

    # (round 68) PyTorch's caching allocator warns "memory allocation failed with OOM on device N while trying to allocate X
    # bytes (free: F, total: T)" when cudaMalloc itself fails; it then frees its cached blocks and tries again, and raises
    # OutOfMemoryError only if that fails too. Read as the failure, no such error is in the log: the room was the
    # allocator's own cache, held in blocks it could not reuse for this size (a split-size cap, interleaved sizes: R16).
    # A working buffer too large once the cache was freed is the second reading (vllm-project/vllm#55407's NVFP4 MoE
    # post-processing under a 20 MB max split)
    R("fragmentation", 3.0, lambda x: x.kind == "torch.alloc_warn",
      lambda x: f"PyTorch's caching allocator warned that cudaMalloc could not get {fmt_bytes(x.req)} with "
                f"{fmt_bytes(x.ev['numbers']['free'])} of {fmt_bytes(x.ev['numbers']['total'])} free; it then frees its cached "
                "blocks and retries, and no OutOfMemoryError follows here: the memory was in its cache, in blocks it could not "
                "reuse for this size (PYTORCH_CUDA_ALLOC_CONF: expandable_segments, max_split_size_mb)", first="frag"),

    # Faiss's StandardGpuResources holds scratch memory aside on each card it uses (512 MiB at least, native_runtimes.
    # FAISS_TEMP_MIN) unless told otherwise (noTempMemory, setTempMemory); a device allocation outside it smaller than that
    # reservation failed: the memory set aside but unused (a flat index uses little of it) would have held it (R16;
    # facebookresearch/faiss#1031, its maintainer's answer)
    R("fragmentation", 2.4, lambda x: x.kind == "faiss.alloc" and x.ev.get("form") == "device" and x.req < FAISS_TEMP_MIN,
      "Faiss could not allocate {req:b} outside the scratch memory its StandardGpuResources holds aside on each card (512 MiB "
      "on a card of 4 GiB or less, 1 GiB up to 8 GiB, 1.5 GiB above, unless set): that reservation alone would hold the "
      "request; res.noTempMemory() or res.setTempMemory(smaller) gives it back (and see what else holds the card)"),

    # --- weights-exceed-vram: the model itself does not fit (rules_weights.py) -------------------------
    *WEIGHTS,

    # --- activations: the working tensors of this resolution, length or batch --------------------------
    R("activations", 2.4, lambda x: torch(x) and x.total and big_request(x),    # a "0 bytes" card: no share
      "one request of {req:b} is {req_share:.0%} of the {total:b} card: the tensor itself is too large for this resolution, length or batch",
      first="act"),
    R("activations", 1.0, torch_full, lambda x: requested_free(x, of_total=False), first="act"),
    R("activations", 1.5, torch, lambda x: requested_free(x, of_total=True), first="act"),
    R("activations", 2.4, lambda x: async_numbers(x) and big_request(x), "one request of {req:b} is {req_share:.0%} of the card",
      first="act"),
    R("activations", 1.0, async_full, "{req:b} requested with {free:b} free", first="act"),
    R("activations", 1.5, async_numbers, lambda x: f"{fmt_bytes(x.req)} requested"
      + (f" with {fmt_bytes(x.free)} free" if x.free is not None else "") + f", {fmt_bytes(x.allocated)} allocated of {fmt_bytes(x.total)}",
      first="act"),
    R("activations", 1.0, lambda x: x.branch == "async" and not x.total, "cudaMallocAsync refused an allocation", first="act"),
    # (round 68) the caching allocator's cudaMalloc warning read as the failure (the fragmentation row above leads): the
    # working buffer may not have fit even after the cache was freed
    R("activations", 1.0, lambda x: x.kind == "torch.alloc_warn",
      "or the {req:b} working buffer did not fit even after the cache was freed (an OutOfMemoryError would follow)", first="act"),
    R("activations", 1.2, lambda x: x.branch == "dml",
      lambda x: (f"DirectML could not allocate one tensor of {fmt_bytes(x.req)}" if x.req else "DirectML's allocator ran out of memory")
      + "; it reports nothing else about the card", first="act"),
    # vllm-metal left no KV cache, and the profile run's overhead (beyond the weights, under the whole budget) is the larger
    # share: the profile's peak at its batch of tokens is what to cut (review21 finding 4)
    R("activations", 3.0, metal_kv_profile_peak,
      lambda x: f"vllm-metal's profile run measured {fmt_bytes(x.ev['overhead'])} of overhead beyond the "
                f"{fmt_bytes(x.ev['model_memory'])} of weights, and together they left no KV cache in its usable Metal budget "
                f"({fmt_bytes(x.n['max_allowed'])}): lower --max-num-batched-tokens (the profile run's batch), then --max-model-len, "
                "or raise VLLM_METAL_MEMORY_FRACTION if the Mac has memory to spare", first="act"),
    # the message alone, no card numbers, and one request of 16 GiB or more (larger than most cards hold, not than every
    # card: some hold up to 192 GB): a tensor of the input's size. Not IREE's status without a HAL driver named: its buffer
    # may be the host's (a CPU HAL), and nothing says which memory refused it
    R("activations", 2.4, lambda x: x.branch is None and x.req >= 16 * GiB and not (x.kind == "iree.alloc" and not x.ev.get("device_kind")),
      "one request of {req:b}, larger than most cards hold: the input's resolution, length or batch makes one tensor this size", first="act"),
    # PyTorch's caching allocator reported a VRAM shortage with the card's numbers cut ("CUDA out of memory. See documentation",
    # or cut after "Tried to allocate N"): a script's working tensors lead, weakly (the row of the same message with its
    # numbers), over a message with nothing at all; a request of 16 GiB or more is the row above
    R("activations", 1.2, lambda x: x.kind in ("torch.cuda", "torch.hip") and (not x.req or torch_cut(x)) and x.env["runtime"] == "pytorch",
      lambda x: "PyTorch's caching allocator ran out of GPU memory" + (f" on a {fmt_bytes(x.req)} request" if x.req else "")
      + " (the card's numbers are cut): in a script, this input's size (batch, resolution, frames, length) is the usual knob",
      first="act"),
    # (round 84) CANN's graph engine refused one Ascend NPU allocation under PyTorch (torch_npu runs its operators through
    # CANN; native_runtimes.CANN_RTMALLOC): the request alone, no card figures, read as PyTorch's message cut after its request
    R("activations", 1.2, lambda x: x.kind == "npu.cann_malloc" and x.env["runtime"] == "pytorch",
      "the Ascend NPU's driver refused {req:b} (CANN's rtMalloc, EL0004) and nothing gives the card's figures: in a script, this "
      "input's size (batch, sequence length) is the usual knob", first="act"),
    R("activations", 2.4, lambda x: x.branch == "mps" and x.req >= 0.3 * x.cap, "one request of {req:b} is {req_share:.0%} of the {cap:b} MPS limit",
      first="act"),
    R("activations", 1.2, mps_full, "{req:b} requested", first="act"),
    R("activations", 1.5, lambda x: x.branch == "mps",
      lambda x: "; ".join(filter(None, [f"{fmt_bytes(x.req)} requested" if x.req else "", ", ".join(  # printed figures only
          f"{label} {fmt_bytes(x.n[k])}" for k, label in (("allocated", "MPS"), ("other_allocations", "other allocations"),
                                                          ("max_allowed", "limit")) if x.n.get(k) is not None)]))
      or "MPS's out-of-memory message with no figures printed", first="act"),
    # (round 96) the message alone, its cache holding freed blocks (3-4 % of the card): passes have run, and their working
    # tensors are what grew; beside the message's own row (1.5, the "act" group above) over script_full's weights reading (1.6)
    R("activations", 1.0, slack_passed,
      "{ru:b} reserved by PyTorch but unallocated ({ru_share:.1%} of the card) and no traceback: tensors were freed and their "
      "blocks kept, so passes have run through the cache; the working tensors of this input (batch, resolution, length) grew"),
    # (round 71) the runner-up of an application's VRAM pre-flight refusal (rules_other): if its estimate is right, the job's
    # size (batch, duration, resolution) is what it scales with
    R("activations", 1.0, kind("app.vram_preflight"),
      "if the pre-flight estimate is right, the job's size it was computed for (batch, duration, resolution) is the knob"),
    *ZERO3_ROWS,     # (aud68c #9) DeepSpeed ZeRO-3 gathering parameters: names the frame (0.5), moves no cause
    R("activations", 3.4, stage("compute-failed"),
      "llama.cpp: failed to allocate compute buffers (the graph's scratch memory, grows with -ub/-b and context)"),
    R("activations", 2.6, stage("after-kv-buffers"), "weights and KV cache were allocated; the compute buffer failed"),
    R("activations", 2.6, lambda x: x.branch == "ggml" and x.ub and x.ub >= 4096
      and not any(k in x.kinds for k in ("ggml.kv_cache", "ggml.model_load")),
      "-ub {ub}: a micro-batch of {ub} tokens makes the compute buffer several GiB"),
    # ggml's CUDA error names the function: its memory pool grows with the compute graph during evaluation
    R("activations", 2.4, lambda x: x.kind == "cuda.driver" and (x.f["ggml_cuda_fn"] or "").startswith(("ggml_cuda_pool", "alloc")),
      "llama.cpp's CUDA memory pool (scratch memory of the compute graph) could not grow, in {f[ggml_cuda_fn]}()"),
    # the runtime's error context names a forward or prefill pass (predicates.stage_said): the weights were resident and the
    # pass's working tensors, which grow with the prompt's length and the batch, ran out
    R("activations", 3.0, lambda x: stage_said(x) == "act",
      "the runtime's own error context names the forward (prefill) pass: the weights were resident and that pass's working "
      "tensors ran out; process the prompt in chunks (chunked or streaming prefill) or shorten it"),
    R("activations", 1.4, kind("cublas.alloc", "cudnn.alloc"),
      lambda x: f"{'cuBLAS' if x.kind == 'cublas.alloc' else 'cuDNN'} could not allocate its workspace: the card was already full"),
    # memory outside PyTorch or cached slack weighs less in training: the batch's activations and gradients are the knob
    # (not when the traceback shows the model being placed: that comes before any step)
    # (also PyTorch's message cut after "Tried to allocate N": still the caching allocator's VRAM shortage)
    R("activations", 1.2, lambda x: x.training and (x.branch in ("torch", "async", "mps") or torch_cut(x))
      and "weights-exceed-vram" not in (x.frame_cause, x.src_cause),
      "the failure came in a training run ({training_seen}): the batch's activations and gradients"),
    # a library's own CUDA code (dlib, cuTAGI) failed cudaMalloc inside a training run: the step's tensors, as in PyTorch above
    R("activations", 1.5, lambda x: x.training and x.kind == "cuda.driver" and x.ev.get("form") == "runtime_call",
      "a training run's own CUDA code could not allocate device memory: the mini-batch's working tensors (a smaller batch)"),
    # outside training too, a cudaMalloc the program names is one of its own data buffers, sized by its input (its CUDA context
    # already exists, so not a card another program holds at start)
    R("activations", 1.5, lambda x: not x.training and x.kind == "cuda.driver" and x.ev.get("form") == "runtime_call",
      "the program's own cudaMalloc of a data buffer failed: its working memory at this input size (resolution, count, batch)"),
    # (round 91) COLMAP's SIFT matcher (SiftGPU, CUDA or OpenGL) could not allocate its match buffers, sized by max_num_matches: the
    # matching pass's working memory at that setting (its own advice: fewer matches), or CPU matching
    R("activations", 2.0, kind("colmap.sift_match"),
      "COLMAP's GPU SIFT matcher could not allocate its buffers for the maximum number of matches: the matching pass's working "
      "memory at that setting; a lower --SiftMatching.max_num_matches, or CPU matching (--SiftMatching.use_gpu 0); on an OpenGL "
      "build, the adapter its GL context is on"),
    # Enoki's cuda_malloc failed after trimming its own cache: its arrays are the render's and the autodiff graph's
    R("activations", 4.0, kind("enoki.malloc"),
      "Enoki (Mitsuba 2, psdr-cuda) could not allocate an array even after trimming its own cache: the rendering and its "
      "autodiff graph at this sample count and resolution fill the card; fewer samples per pass (average several passes) or "
      "a lower resolution"),
    # CatBoost's GPU trainer takes its pool once at start (gpu_ram_part of the card, 0.95 by default) and places the quantized
    # data set, the categorical features' statistics and each depth's histograms in it: a block the pool cannot fit after it
    # defragments is the training data at these settings (catboost/catboost#302: the big pool on the card; its maintainer's
    # answer, categorical data in pinned host memory)
    R("activations", 2.0, kind("catboost.pool"),
      "CatBoost's GPU memory pool (taken at start: gpu_ram_part of the card) could not fit a {req:b} block with {n[free]:b} left "
      "in it: the training data set and its working buffers at these settings need more than the card; keep categorical "
      "features in host memory (gpu_cat_features_storage='CpuPinnedMemory'), fewer borders (border_count), a smaller depth, "
      "or more GPUs"),
    *LIB_WORKING,      # (round 73) NCCL, RMM inside an operation, XGBoost, vLLM's profiling cut: rules_libs.py
    # kmcuda's Yinyang refinement (yinyang_t > 0, 0.1 by default) adds its own buffers, named *_yy: the bounds one holds a float
    # per sample per group plus one (kmcuda.cc: samples x (yinyang_t x clusters + 1)), so many clusters make it the largest
    # buffer of the run; yinyang_t=0 allocates none of them (round 59; src-d/kmcuda#26, its maintainer's answer)
    R("activations", 2.2, lambda x: x.kind == "kmcuda.alloc" and str(x.ev.get("buffer", "")).endswith("_yy"),
      lambda x: f"kmcuda could not allocate {fmt_bytes(x.req) + ' ' if x.req else ''}for {x.ev['buffer']}, a buffer of its "
                "Yinyang refinement, sized from the samples times the Yinyang groups (yinyang_t x clusters): turn Yinyang off "
                "(yinyang_t=0), or use fewer clusters; the plain k-means buffers stay"),
    # MLC LLM's memory plan: one shard's weights fit the share it may use (gpu_memory_utilization x the card) and the temporary
    # buffer, the prefill's working memory that --prefill-chunk-size sets, is what does not fit beside them (the message's own
    # third hint; mlc-ai/mlc-llm#3024, round 61)
    R("activations", 4.0, lambda x: x.kind == "mlc.insufficient" and x.n.get("weights", 0) < x.n.get("available", 0),
      "MLC LLM's memory plan: the weights ({n[weights]:b} a shard) fit the {n[available]:b} it may use, the temporary buffer "
      "({n[temporary]:b}, the prefill's working memory) does not fit beside them: a smaller --prefill-chunk-size in "
      "`mlc_llm gen_config`, or a larger gpu_memory_utilization"),
    # kmcuda allocates the samples, the centroids and each per-sample output (assignments, *dest) on the card once per run, each
    # sized from the data set: the buffer it names is the data set at this size (src-d/kmcuda#21: input and output together
    # over the card; its maintainer's answer, subsample)
    R("activations", 2.0, kind("kmcuda.alloc"),
      lambda x: "kmcuda could not allocate " + (f"{fmt_bytes(x.req)} for {x.ev.get('buffer', 'a buffer')}" if x.req else "a buffer")
      + " on the card: its buffers (the samples, the centroids, the per-sample outputs) are sized from the data set, which "
        "does not fit at this size; subsample or split the data, use float16 samples, or spread it over more GPUs (device mask)"),
    # Faiss's device allocations outside its scratch space: an index's stored vectors or codes (add) and the results of a
    # search; one the size of the data added is the data set itself (facebookresearch/faiss#648: 16e9 bytes of vectors)
    R("activations", 1.5, lambda x: x.kind == "faiss.alloc" and x.ev.get("form") == "device" and x.req >= FAISS_TEMP_MIN,
      "Faiss could not allocate {req:b} on the card: an index's stored vectors (or a search's results) at this size; add "
      "the data in chunks, shard the index over GPUs (IndexShards), or store it compressed (float16, IVF-PQ)"),
    # the program's validation or evaluation pass failed: with torch.no_grad() it needs less than the training step that fitted,
    # without it each batch's forward keeps its autograd graph (PyTorch's FAQ); either way the batch's tensors, not the weights
    R("activations", 2.0, lambda x: x.eval_frame and not host(x) and x.kind != "torch.nvml_assert",
      "traceback: {eval_frame}(), a validation or evaluation pass: outside torch.no_grad() (or torch.inference_mode()) its "
      "forward keeps every batch's autograd graph; wrap it, or lower its batch"),
    # (round 118) the program's own sweep said a batch size ran before this failure: the model fits the card beside that batch,
    # so what no longer fits is the larger batch's working tensors
    R("activations", 2.0, lambda x: batch_ran_before(x) is not None and not host(x),
      lambda x: f"the log says batch size {batch_ran_before(x)} ran before this failure: the model fits, the larger batch's "
                "tensors did not"),
    # a sampler node runs loading and sampling both: it hints, where a VAE/encoder/loader node decides
    R("activations", 1.0, lambda x: x.node_cause == "activations", "failing node: {node}", hint=True),
    # (fix66d) not over MPS's "other allocations" outweighing PyTorch's own: the frame names the request, not what filled the limit
    R("activations", 3.0, lambda x: x.frame_cause == "activations" and not mps_other.held_outside(x), "traceback: {where}", hint=True),
    R("activations", 1.2, lambda x: x.entry_cause == "activations", "node entry point: {entry}", hint=True),
    R("activations", 1.0, lambda x: x.log_phase == "sampling", "{sampling}", hint=True),
    # runtimes other than PyTorch: the size of the one buffer that failed, nothing about the card
    R("activations", 2.4, lambda x: x.kind == "xla.oom" and x.ev.get("form") == "compile",
      lambda x: "XLA's compiled program needs " + (f"{fmt_bytes(x.n['required'])} of the chip's {fmt_bytes(x.n['total'])} HBM"
                                                   if "required" in x.n else "more than the chip's HBM (its figures not quoted)")
      + ": its activations and temporaries at this batch and sequence length; lower them, shard the model, or rematerialise "
        "(jax.checkpoint)"),
    # XLA's rematerialization pass could not bring the program under the device's limit: what it reached is what the program
    # holds at its peak, its buffers together (R: a program larger than the card; google-deepmind/mujoco#1431, a replay buffer)
    R("activations", 2.4, kind("xla.remat"),
      "XLA could not bring the compiled program under the device's memory limit by rematerialization: it still needs "
      "{n[required]:b} at its peak, its buffers at these sizes (activations, and any buffer the program keeps on the device: "
      "a replay buffer, a rollout, a batch); lower the sizes that set them, or shard the program over devices"),
    R("activations", 1.5, lambda x: x.kind in OWN_POOLS and x.req < ABSURD_HOST and x.ev.get("form") not in ("compile", "scratch"),
      lambda x: f"{OWN_POOLS[x.kind]} could not allocate"
                + (f" a {fmt_bytes(x.req)} buffer" if x.req else " a tensor") + ": an operator's working memory for this input size"),
    R("activations", 8.0, lambda x: x.warmup,
      lambda x: f"vLLM's {x.warmup} warm-up with {x.warmup_requests} dummy requests"
      + " ran out after the KV cache had taken its share of gpu_memory_utilization: that run's working memory grows with "
        "max_num_seqs; lower --max-num-seqs, or lower --gpu-memory-utilization to leave more outside the KV cache"),
    R("activations", 2.4, lambda x: x.kind == "openvino.buffer_limit" and x.req < ABSURD_HOST,
      lambda x: f"OpenVINO's GPU plugin was asked for one buffer of {fmt_bytes(x.req)}, over the "
      + (f"{fmt_bytes(x.n['max_allowed'])} " if "max_allowed" in x.n else "most ") + "one allocation may take on this "
      "device: this input's length, image count or batch makes one tensor that large; chunk the input (or allow large "
      "allocations)"),
    R("activations", 1.5, kind("metal.oom"),
      "Metal could not back a command buffer with memory (kIOGPUCommandBufferCallbackErrorOutOfMemory): Apple's unified memory ran out"),
    R("activations", 2.4, kind("mps.ndarray_limit"),
      "MPS cannot hold one array over 4 GiB (2**32 bytes): this resolution, length or batch makes one tensor that large; tile it"),
    R("activations", 2.4, kind("mps.buffer_size"),
      "one tensor of {req:b} is larger than the largest Metal buffer the GPU allows: this resolution, length or batch makes it"),
    R("activations", 2.4, lambda x: x.kind == "mlx.buffer_limit" and x.req < ABSURD_HOST,
      lambda x: f"MLX asked Metal for one buffer of {fmt_bytes(x.req)}"
      + (f", over the {fmt_bytes(x.n['max_allowed'])} a single Metal buffer may hold" if "max_allowed" in x.n else ", over Metal's per-buffer maximum")
      + ": this input's resolution, length or batch makes one array that large; cap or chunk the input"),
    # a server's own memory ceiling crossed during a prefill: the chunk's transient working memory (attention over the chunk)
    R("activations", 2.4, lambda x: x.kind == "mlx.ceiling" and x.ev.get("form") not in ("preflight", "safety"),
      lambda x: "the server stopped a prefill when the process's memory crossed its ceiling"
      + (f" ({fmt_bytes(x.n['allocated'])} over {fmt_bytes(x.n['max_allowed'])})" if "allocated" in x.n else "")
      + ": the prefill chunk's working memory (attention over the chunk); smaller prefill chunks, a shorter prompt, or a higher ceiling"),
    # ncnn's Vulkan allocator refused device memory: the upscalers allocate each tile's blobs there, the model's weights are small
    R("activations", 2.0, lambda x: x.kind == "vulkan.alloc" and x.ev.get("form") == "device",
      "Vulkan refused a device-memory allocation (vkAllocateMemory -2, VK_ERROR_OUT_OF_DEVICE_MEMORY): ncnn allocates each "
      "tile's working buffers there and the models are small; a smaller tile size (-t) or image fits"),
    R("activations", 3.0, lambda x: x.kind == "ggml.ctx_pool" and x.ev.get("form") == "tensor_impl",
      "ggml's graph context (a fixed pool in older builds) needs {n[requested]:b} and holds {n[available]:b}: the batch's tensors "
      "overflow it; a smaller -b / n_batch, or a current build (its allocators size the graph themselves)"),
    R("activations", 4.0, lambda x: tgi(x) and "total_tokens" not in tgi(x) and not tgi_tiny(x),
      lambda x: f"text-generation-inference's warmup could not run a prefill batch of {tgi(x)['prefill_tokens']} tokens in what "
                "the weights left: lower --max-batch-prefill-tokens (and --max-total-tokens)"),
    # a tiny prefill (rules_other: not the batch's memory) with no figures printed, nothing shows the weights left room: the batch's own memory stays the runner-up
    R("activations", 3.0, lambda x: tgi_tiny(x) and not tgi_figures(x),
      lambda x: f"unless the weights left less than a GiB of the card (the message prints no figures): a prefill batch of "
                f"{tgi(x)['prefill_tokens']} tokens in what the weights left; lower --max-batch-prefill-tokens"),
    # (round 67) MNN could not acquire an op's working buffer (not one of its parameters, native_runtimes.MNN_PARAMS): the input's
    R("activations", 2.0, lambda x: x.kind == "mnn.acquire" and not mnn_parameter(x),
      lambda x: f"MNN could not acquire {x.ev['op']}'s {x.ev['buffer']} buffer, a working buffer sized by the input: a smaller "
                "input or batch, or fewer layers on the device"),
    R("activations", 1.5, lambda x: x.kind == "tensorrt.oom" and "deserializ" not in x.text.lower(),
      lambda x: "TensorRT ran out of device memory" + (f" for {fmt_bytes(x.req)}" if x.req else "")
      + " while building or running an engine: its workspace and activations grow with the batch and sequence sizes"),
    R("activations", 4.0, lambda x: trt_component(x) and trt_component(x) not in TRT_WEIGHTS + TRT_KV,
      lambda x: f"TensorRT-LLM could not create its {trt_component(x)}{trt_free(x)}: "
                "working memory sized by max_num_tokens (and max_seq_len for the sampler); lower them, or leave more "
                "outside the KV cache (kv_cache_config.free_gpu_memory_fraction)"),

    # --- vae-decode, text-encoder: the pipeline stage that failed (rules_stages.py) ----------------------
    *STAGES,

    # --- other-process: memory held outside this process -----------------------------------------------
    # (tri50) the guard names the dynamic ceiling (what the Mac can reclaim now) as binding under its static cap, and prints what
    # is reclaimable: memory other applications hold is what the estimate meets (the guard's own advice: close other apps)
    R("other-process", 1.5, lambda x: x.kind == "mlx.ceiling" and x.ev.get("form") == "preflight"
      and "dynamic" in (x.ev.get("binding") or "") and "free" in x.n,
      "the guard's binding ceiling is the dynamic one, what macOS can reclaim now ({n[free]:b}), under its {n[limit]:b} static "
      "cap: other applications hold the rest; quit them and retry before shortening the prompt"),
    # Ollama's scheduler, right after the runner's allocation failed, says the model needs more GPU memory than is available
    # and evicts another loaded model to make space: that resident model (another runner) held the memory
    # (the same load attempt: no other load starts between the failure and the eviction; review18b #5)
    R("other-process", 5.0, lambda x: x.branch == "ggml" and any(
        0 < n - (x.line or 0) <= OLLAMA_EVICT_WITHIN and not any((x.line or 0) < s < n for s in x.f["ggml_load_start"])
        for n in x.f["ollama_evict"]),
      "Ollama's scheduler, after this load failed, evicts another loaded model to make space: a model already resident (another "
      "runner) holds the memory; unload it (ollama stop, keep_alive) or lower OLLAMA_MAX_LOADED_MODELS"),
    *RUNTIME_HELD,
    *TINY_SHARED,     # (tri86) a tiny card that PyTorch's figures by process show shared
    R("other-process", 3.0, lambda x: others_hold(x) and others_outweigh_own(x),
      "other processes hold {others:b} on this GPU; freeing them covers the {short:b} shortfall", first="op"),
    R("other-process", 1.5, lambda x: torch(x) and x.others is not None and x.others >= 0.15 * x.total and others_outweigh_own(x),
      "other processes hold {others:b} ({others_share:.0%} of the card)", first="op"),
    # no per-process report (Windows, containers, old PyTorch): what is neither free nor PyTorch's belongs
    # to the CUDA context (~0.3-1 GiB) and to other programs
    R("other-process", 3.0, lambda x: torch(x) and x.others is None and x.outside is not None
      and outside_others(x) >= 0.5 * x.total and outside_others(x) >= x.short,
      "{outside:b} of the {total:b} card is used outside PyTorch: another program holds it", first="op"),
    R("other-process", 1.6, lambda x: torch(x) and x.others is None and x.outside is not None
      and outside_others(x) - GiB >= max(GiB, 0.15 * x.total) and outside_others(x) - GiB >= x.short,
      "{outside:b} of the card is used outside PyTorch (other programs, or non-PyTorch libraries)", first="op"),
    # (round 98) no reserved figure and no process list: what is neither free nor PyTorch's tensors, from 0.8 of the card
    R("other-process", 1.6, gap_others, lambda x: f"{fmt_bytes(x.total - x.free - x.allocated)} of the {fmt_bytes(x.total)} card is "
      "neither free nor PyTorch's tensors (the message gives no reserved figure): another program holds it, or this process's cache",
      first="op"),
    # cudaMallocAsync's report: PyTorch sets its pool's release threshold to UINT64_MAX (CUDAMallocAsyncAllocator.cpp
    # lazy_init_device), so memory this process freed stays in the pool, neither "Currently allocated" nor "Free": the gap is
    # this process's pool and context as much as other programs'. Past half the card it is another program (as row "outside
    # PyTorch" reads the native message); under that it stays under this input's working tensors (activations 1.5)
    R("other-process", 2.6, lambda x: async_numbers(x) and x.others is not None and x.others >= max(2 * GiB, 0.5 * x.total),
      "{others:b} of the {total:b} card is used outside PyTorch's allocations: more than half the card, another program holds it",
      first="op"),
    R("other-process", 1.4, lambda x: async_numbers(x) and x.others is not None and x.others >= max(2 * GiB, 0.15 * x.total),
      "{others:b} of the {total:b} card is used outside PyTorch's allocations (other programs, or memory this process freed that "
      "the cudaMallocAsync pool keeps, and its CUDA context)", first="op"),
    # No row reads "beyond a CUDA context's ~1 GiB, what is outside PyTorch's allocations would have served the request" from
    # this message (the native message's "outside PyTorch" rows do: there the reserved figure is counted in). cudaMallocAsync
    # prints no reserved figure, and the pool keeps what this process freed, so the gap beyond the context is this process's
    # pool as much as another program's; under half the card it stays under the input's working tensors (round 51: a 2.6
    # row that read it as another program named SUPIR's 3.30 GiB gap and MiniMax H3's 3.01 GiB gap other-process)
    R("other-process", 1.3, lambda x: async_numbers(x) and x.others is not None and x.others >= 1.2 * GiB and x.others >= x.req - x.free,
      "{others:b} used outside PyTorch; freeing it would cover the request", first="op"),
    # PyTorch itself holds nothing ("0 bytes is allocated by PyTorch, and 0 bytes is reserved"): everything in use on the card
    # beyond a context is another program's, and a request under half the card would have fitted without it; this outweighs
    # a loading frame (the model being moved to the card fails because the card is taken, not because the model is large)
    R("other-process", 1.5, lambda x: torch(x) and x.allocated == 0 and x.reserved == 0 and x.outside is not None
      and outside_others(x) >= 0.5 * x.total and outside_others(x) >= x.short and x.req < 0.5 * x.total,
      "PyTorch holds 0 bytes of its own, yet {outside:b} of the {total:b} card is in use: another program holds it"),
    R("other-process", 3.2, mps_other.held_outside,
      "MPS: other allocations ({other_alloc:b}) outweigh PyTorch's {allocated:b} of the {cap:b} limit: memory this process holds outside PyTorch's allocator (Metal and MPSGraph buffers, or growth across runs)"),
    # (tri70) and a launcher's gate that mirrors it before vLLM starts (form launcher): the same reading, its own figures
    R("other-process", 4.0, kind("vllm.startup_free"), startup_free_says),
    R("other-process", 4.0, kind("vllm.profile_race"), "another process released GPU memory while vLLM was profiling"),
    # a driver-level error names no holder: cudaErrorMemoryAllocation is "unable to allocate enough memory or other resources"
    # (CUDA runtime API), also a size computed wrong or a build that does not match the driver; another process is the runner-up
    # to the *other* row (1.0), unless the call that failed creates the context or a stream (before this process holds anything)
    R("other-process", 1.2, context_call,
      lambda x: (f"{mem_query(x)}, a memory query that allocates nothing, failed for lack of memory: this process's "
                 "context could not be created" if mem_query(x) else "the CUDA call that failed creates a context or stream")
      + ", before this process holds any memory: another process holds the card", first="drv"),
    # TensorFlow's stream executor allocates the region its BFC allocator was given when the device was created ("Created
    # TensorFlow device ... with N MB memory", sized from the free memory it measured then; JAX preallocates a share of the card
    # at start): the driver refusing it means memory free at start was taken since
    # (not when the request was more than the free memory TensorFlow printed at device creation: it was never sized from it)
    R("other-process", 1.2, lambda x: x.kind == "cuda.driver" and x.ev.get("form") == "stream_executor"
      and not x.req > x.f["tf_device_mem"].get("free", x.req),
      "the stream executor could not allocate the region it sized from the memory free when the device was created: "
      "memory was taken since, most often by another process", first="drv"),
    R("other-process", 0.9, kind("cuda.driver"), "CUDA driver out of memory: often context creation while another process holds the card",
      first="drv"),
    # TensorRT-LLM's KV sizing (predicates.trt_kv_starved): "available" is what cudaMemGetInfo reported free with the engine
    # resident, so memory other processes hold is missing from it as well as the engine; where nothing measured the others
    # (the host's snapshot, the row below), a second program on the card is the runner-up to the weights row
    R("other-process", 1.4, lambda x: trt_kv_starved(x) and x.snap_others is None,
      lambda x: "TensorRT-LLM's 'available' is the memory the driver reported free once the engine was resident: what other "
                "processes hold is missing from it too, and the log prints no share for either; check nvidia-smi"),
    # what the host measured at the failure (the OOM panel's probe snapshot), when the message said nothing
    R("other-process", 2.8, lambda x: x.snap_others and "other-process" not in x.scored
      and x.snap_others >= max(1.5 * GiB, 0.1 * x.snap_total),
      "at the failure other processes held {snap_others:b} of the {snap_total:b} {snap_of}"),

    # --- kv-cache: what a runtime's context, slots or batch size (rules_kv.py) ----------------------------
    *KV_CACHE,

    # --- host-ram: system memory, not the GPU (rules_host.py) ----------------------------------------
    *HOST_RAM,

    # --- leak: memory not returned between runs --------------------------------------------------------
    R("leak", 2.5, lambda x: fresh(x) and x.ran_before,
      "{ran_before} ran fine in an earlier run of this log and fails now: memory was not returned in between"),
    R("leak", 1.3, lambda x: fresh(x) and not x.prior_ooms and x.successes >= 1,
      "the same log shows {successes} successful run(s) before this failure: memory may not be returned between runs"),
    R("leak", 3.6, lambda x: fresh(x) and x.prior_ooms and x.grew_from, "allocated memory grew from {grew_from:b} to {grew_to:b} between failures"),
    R("leak", 1.2, lambda x: fresh(x) and x.prior_ooms and x.successes >= 1,
      "OOM #{oom_number} in this log, after {successes} successful run(s): memory is not returned between runs", first="count"),
    R("leak", 1.0, lambda x: fresh(x) and x.prior_ooms >= 2, "OOM #{oom_number} in this log", first="count"),
    # a training run that failed in its third epoch or later (counted from 1: "Epoch 3/10"; from 0, later still): every sample
    # has been through the step at least once, so the step's own tensors fitted; what grows from epoch to epoch is memory kept
    # across steps (PyTorch's FAQ: "Don't accumulate history across your training loop": a loss summed without .item())
    # (not PyTorch's NVML assert: that is a bug of its own report, read as other)
    R("leak", 2.0, lambda x: x.training and (x.epoch or 0) >= 3 and not host(x) and x.kind != "torch.nvml_assert",
      "the training run failed in epoch {epoch}: every batch of an epoch already fitted, so memory grew across steps "
      "(tensors kept from step to step, a loss summed without .item(), a growing list or cache)"),
    # (tri65) the loop's own per-step allocated figure rose at every print before the failure (predicates.step_mem_grew)
    R("leak", 3.6, lambda x: fresh(x) and step_mem_grew(x), lambda x: "the training loop's allocated memory rose at every one of "
      "its {2} prints before this failure, from {0} to {1}: memory kept from step to step".format(*map(fmt_bytes, step_mem_grew(x)[:2]), step_mem_grew(x)[2])),
    # (fix67b) what a wrapper's runs left allocated rose from run to run with the same block swap summary (wrapper_runs.py)
    R("leak", 5.0, lambda x: fresh(x) and run_mem_grew(x), lambda x: "the wrapper's allocated memory after each run rose over {2} "
      "runs, from {0} to {1}, with the same block swap summary and sequence length each time: memory the runs did not return".format(
          *map(fmt_bytes, run_mem_grew(x)[:2]), run_mem_grew(x)[2])),
    R("leak", 2.5, lambda x: fresh(x) and same_run_before(x) and not run_mem_grew(x),
      "the wrapper's failing run placed the same blocks (its block swap summary) for the same sequence length as a run of "
      "this log that finished: the same work fitted then, so memory was not returned in between"),
    # earlier OOMs of the same host process (context "previous_ooms", which one failure's text cannot show)
    R("leak", 3.6, lambda x: fresh(x) and x.session_grew_from,
      "allocated memory grew from {session_grew_from:b} at the previous OOM of this ComfyUI session to {session_grew_to:b} now"),

    # MLX hit Metal's limit on the number of live buffers (macOS: 499000), a count, not bytes: a process reaches it only by
    # keeping arrays alive, growing over steps or requests (a lazy graph never evaluated, state or snapshots a cache keeps):
    # memory not returned (docs/triage-causes.md R7: the corpus's buffer-count cases are `leak`, 2 of 3)
    R("leak", 6.0, kind("mlx.resource_limit"),
      "MLX hit Metal's limit on the number of live buffers ({n[buffer_count_limit]}), a count, not bytes: arrays kept alive "
      "pile up over steps or requests (a long lazy graph never evaluated, state or buffers a cache keeps); evaluate more "
      "often (mx.eval), release finished requests' arrays, cap the cache (mx.set_cache_limit)"),

    # Electron's renderer (Comfy Desktop's window: the frontend page) ran out: memory the page keeps growing over a session
    # (open workflows, queue history, panels that never release their state), not the GPU nor the Python server
    R("leak", 6.0, kind("electron.renderer_oom"),
      "the desktop window's renderer (Electron, the frontend page) was killed for running out of memory: state the page "
      "keeps and never releases over a session (open tabs and workflows, queue history, a panel or extension), not the GPU; "
      "reload the window, close what piles up, update or disable the extension that grows"),

    # --- graph-capture: CUDA graphs captured after the memory budget was handed out ----------------------
    # once requests are served, capture is over: a later failure is not the capture's
    R("graph-capture", 4.0, lambda x: x.graph_capture and not x.f["vllm_serving"]
      and x.kind in ("torch.cuda", "torch.hip", "cuda.driver", "torch.oom_type"),
      lambda x: ("vLLM was capturing CUDA graphs when it ran out: the KV cache had already taken gpu_memory_utilization's share, "
                 "graph capture needs memory outside it") if x.env["runtime"] == "vllm"
      else "the failure came while CUDA graphs were captured: the capture's memory pool comes on top of the model's"),
    *CAPTURE_AFTER_KV,     # (fix67a) a capture frame after the KV cache was sized (rules_capture.py)
    # (round 118) vLLM on the TPU (tpu-inference) loading the programs it precompiles in capture_model: they load outside
    # gpu_memory_utilization's share, which the KV cache had already taken ("Error loading program 'jit_...': Attempting to reserve")
    R("graph-capture", 4.0, lambda x: x.graph_capture and not x.f["vllm_serving"] and x.kind == "xla.oom" and x.env["runtime"] == "vllm",
      "vLLM was precompiling and loading its programs (capture_model) when the TPU ran out: the KV cache had already taken "
      "gpu_memory_utilization's share, and the compiled programs load outside it"),

    # ggml's CUDA check names the function: the one that evaluates a graph and captures it as a CUDA graph makes no
    # allocation of its own besides capture, instantiate and launch (ggml-cuda.cu; older builds evaluate_and_capture_cuda_graph)
    R("graph-capture", 4.0, lambda x: x.kind == "cuda.driver" and "capture" in (x.f["ggml_cuda_fn"] or "") and "graph" in x.f["ggml_cuda_fn"],
      "ggml's CUDA backend ran out in {f[ggml_cuda_fn]}(): capturing or instantiating the CUDA graph needs memory of its own on "
      "top of the model, KV cache and compute buffers; GGML_CUDA_DISABLE_GRAPHS=1 turns the graphs off, or leave more headroom"),
    *CAPTURE_POOLS,     # (tri71) PyTorch's private pools hold the request idle (rules_capture.py)

    # --- other: the driver, the platform, or nothing to go on (rules_other.py) --------------------------
    *BACKPEDAL_ROWS,                # (tri87) the stream executor's BFC allocator backing off, no failure after (bfc_backpedal.py)
    *OTHER,
    *NATIVE_ABORT_ROWS,             # (tri82) a ComfyUI server that died of a native abort (native_abort.py)

    # --- fallbacks: read what the sections above scored ------------------------------------------------
    # (not the graph allocator's placement in a buffer it already has: no device allocation failed there)
    R(LEADER, 0.1, lambda x: x.branch == "ggml" and x.n.get("requested") and x.ev.get("form") != "tallocr",
      "failed allocation: {n[requested]:b}"),
    R("other", 1.0, lambda x: x.branch == "ggml" and not x.scored, "llama.cpp/Ollama allocation failure without detail"),
    R("other", 1.0, lambda x: not x.scored, "an out-of-memory error without numbers or context"),
    # one weak cause alone: the likeliest other reading beside it (rules_runner_up.py, chosen at first sight)
    *RUNNER_UP_ROWS,
]
