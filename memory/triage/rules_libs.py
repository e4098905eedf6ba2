"""Triage's rule rows for *activations* that a library's or server's own line decides (round 73; rows, not code: the row
format is in rules.py's docstring). rules.py puts them in its activations section, before kmcuda's rows."""
from .predicates import RAPIDS_OP_PATHS, kind, rapids_op_frame, vllm_layer_pass
from .rule_row import Rule
from .server_predicates import fattn_frame

R = Rule
LIB_WORKING = [
    # (round 114) a CUDA out-of-memory error raised inside llama.cpp's flash-attention kernel launch (its backtrace names
    # launch_fattn or ggml_cuda_flash_attn_ext): the kernel takes its buffers from ggml's pool at each call, a converted F16
    # copy of the K/V it reads (growing with the context reached) and its partial results (with the micro-batch)
    R("activations", 3.0, fattn_frame,
      "the CUDA error came inside llama.cpp's flash-attention kernel (its backtrace names launch_fattn): the kernel's working "
      "buffers from ggml's pool (an F16 copy of the quantized K/V it reads, growing with the context reached, and partial "
      "results per micro-batch) did not fit what the weights and cache left; a smaller -ub (micro-batch), or more layers "
      "on the CPU"),
    # (round 73) XGBoost's device allocator (device_vector.cu) names the request and the card's free memory: a request over what
    # is free is the training run's own buffers at these settings: the quantized data, gradients, and above all the histogram
    # cache, one histogram per tree node (features x bins), the nodes doubling with each level of depth (dmlc/xgboost#11684:
    # 64 GB asked with 53 GB free at depth 12 on 13k columns; its maintainer's answer, max_cached_hist_node)
    R("activations", 2.0, lambda x: x.kind == "xgboost.alloc" and x.req and "free" in x.n and x.req > x.n["free"],
      "XGBoost asked for {req:b} with {n[free]:b} free on the card: the training run's own buffers at these settings (the "
      "histogram cache grows with tree depth x features x bins, and the quantized data with rows x features) need more than "
      "the card; cap the cache (max_cached_hist_node), a smaller max_depth or max_bin, fewer features (native categorical "
      "support instead of one-hot columns), or more workers to split the rows"),
    # (round 73) a paste cut inside vLLM's start-up profiling (parse.profile_cut): the one forward pass over dummy inputs at the
    # configured maximum (max_num_seqs sequences, and for a multimodal model dummy images per sequence up to max_model_len) is
    # the peak of that step; the KV cache is not allocated yet and the weights have loaded (vllm-project/vllm#10569,
    # OpenBMB/MiniCPM-V#392: lower max_num_seqs and max_model_len both fixed it)
    R("activations", 1.5, kind("vllm.profile_cut"),
      lambda x: f"the traceback ends inside vLLM's memory profiling ({x.ev['at']}), cut before its error line: that step runs the "
                "model once on dummy inputs at the configured maximum (max_num_seqs sequences; for a multimodal model dummy "
                "images or audio per sequence up to max_model_len) before the KV cache exists; if the error was an out of "
                "memory, start with a lower --max-num-seqs and --max-model-len (or --limit-mm-per-prompt); paste the "
                "exception line to be sure"),
    # (round 106) PyTorch's message cut after its request in a vLLM run, raised in one of its model layers' forward code (a
    # frame under model_executor/layers/, not a weight loader; predicates.vllm_layer_pass): the pass's working tensors at the
    # batch served, as rules.py's row reads the same cut message in a script (VanLangSRI/vllm_gemma4_E4B's report: a
    # gemm at 64 concurrent sequences with speculation's verify positions, graphs off)
    R("activations", 1.2, vllm_layer_pass,
      "PyTorch's caching allocator ran out of GPU memory on a {req:b} request inside one of vLLM's model layers (the card's "
      "numbers are cut): a forward pass's working tensors at the batch being served; lower --max-num-seqs or "
      "--max-num-batched-tokens (and the speculative tokens, if any), or leave more headroom (--gpu-memory-utilization)"),
    # (round 106) Ollama's offload record placing no layer on the GPU because its own estimate of the compute graph alone is
    # over the GPU's available memory (other_runtimes.ollama_graph_over): the graph, which the context (num_ctx x
    # OLLAMA_NUM_PARALLEL) sizes, does not fit, not the weights or the KV cache (R14a; ollama/ollama#11790, its collaborator's
    # diagnosis: 3 x 128k, a 96.0 GiB graph over 95.8 GiB; a smaller context or fewer parallel slots)
    R("activations", 4.0, kind("ollama.graph_over"),
      "Ollama's own estimate puts the compute graph at {n[required]:b}, over the {n[available]:b} the GPU has available, so it "
      "placed no layer on the GPU: the graph grows with the context times the parallel slots; lower the context "
      "(num_ctx, OLLAMA_CONTEXT_LENGTH) or OLLAMA_NUM_PARALLEL, or turn flash attention on where the model supports it"),
    # NCCL allocates its channel buffers with cudaMalloc outside the framework's pool, lazily at a communicator's first
    # collective: when that fails the job's own memory (PyTorch's cache after the largest batch, XLA's preallocation) had filled
    # the card, and the fix is this job's working set. Until round 73 the row named "other" while giving exactly that fix; it
    # reads as activations now (EleutherAI/lm-evaluation-harness#2458: batch_size auto picked a batch that left NCCL no room at
    # the final gather; a smaller batch set by hand finished)
    # (round 92) NCCL's own check's layout (other_patterns.NCCL_CUDA_CHECK, form nccl) names it where PyTorch relays the line alone
    R("activations", 2.0, lambda x: x.kind == "cuda.driver" and ("NCCL" in x.text or x.ev.get("form") == "nccl"),
      "NCCL could not allocate its buffers: it allocates them with cudaMalloc outside the framework's memory pool, so the pool "
      "(PyTorch's cache, XLA's preallocation), filled by this job's batches, left too little; leave headroom: a smaller batch "
      "(not an automatically chosen maximum), XLA_PYTHON_CLIENT_MEM_FRACTION, or smaller NCCL buffers (NCCL_BUFFSIZE)"),
    # (round 73) RMM's pool reached its maximum while a cuDF, cuGraph or cuML operation was on the stack: that operation's
    # working buffers at this input size (a graph's renumbering, a join, a densified matrix) are what filled the pool, over the
    # pool-maximum reading (other 3.0), which stays second; a pool refused while it was created or sized (a Dask worker's
    # plugin setup, rmm.reinitialize) shows no such frame (rapidsai/cugraph#2769: from_dask_cudf_edgelist's own footprint;
    # its developers' workarounds, legacy_renum_only and managed memory)
    R("activations", 3.5, lambda x: x.ev.get("form") == "pool_limit" and rapids_op_frame(x),
      lambda x: "RMM's pool reached its maximum while " + next((f"{func}()" for p, func in reversed(x.frames)
                                                                  if any(s in "/" + p.replace("\\", "/") for s in RAPIDS_OP_PATHS)), "a RAPIDS operation")
      + " allocated its working buffers: that operation at this input size needs more than the pool can give; process the "
      "data in smaller partitions (more Dask partitions or workers), a lighter variant of the step, or a pool over managed "
      "memory that can spill (rmm_managed_memory=True); raising the pool's maximum helps only if the card has room left"),
]
