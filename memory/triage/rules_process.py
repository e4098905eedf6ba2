"""Triage's rule rows for *other-process* that a runtime's own line decides (rows, not code: the row format is in rules.py's
docstring). rules.py puts them at their place in the other-process section, after Ollama's eviction row."""
from ..units import fmt_bytes
from .predicates import cumem_wake_up, kaldi_held_outside, kind, listed_others_cut, listed_several_cut, placing_taken, pool_worker_prealloc
from .processes import SMI_APPS_MIN, smi_apps_after
from .rule_row import Rule
from .smi_procs import graphics_held, graphics_hold
from .server_predicates import ollama_discovery_cpu

R = Rule
RUNTIME_HELD = [
    # (fixZ) vLLM's CPU worker (v1/worker/cpu_worker.py, 0.20.2) at start-up, before it loaded anything: the node's RAM not
    # available (total less available) is held outside the worker, and freeing it would cover the share it asks for; its
    # message says "reduce CPU memory used by other processes". Keyed on the form alone: the share is at most the total, so
    # what is not available (total - available) always covers the shortfall (requested - available) (rev54)
    R("other-process", 4.0, lambda x: x.kind == "vllm.cpu_node" and x.ev.get("form") == "startup",
      lambda x: f"vLLM's CPU worker found {fmt_bytes(x.n['available'])} of the node's {fmt_bytes(x.n['total'])} RAM available at "
                f"start-up, before loading anything, and asks for {fmt_bytes(x.n['requested'])} (--gpu-memory-utilization "
                f"{x.n['gpu_memory_utilization_ratio']} of the total): the {fmt_bytes(x.n['other_processes'])} not available is held "
                "by other processes (and the system's own); stop them or ask for a smaller share"),
    # (fixZ) the same worker at the KV cache's allocation (no --kv-cache-memory-bytes): its share less its own RSS (this_process,
    # as determine_available_memory subtracts it) is the KV cache, and what is neither available nor the worker's is other
    # processes' (other_processes), enough to cover the KV cache's shortfall
    R("other-process", 4.0, lambda x: x.kind == "vllm.cpu_node" and x.ev.get("form") == "kv_auto" and "kv_needed" in x.n
      and (x.n.get("other_processes") or 0) >= x.n["kv_needed"] - x.n["available"],
      lambda x: f"vLLM's CPU worker needs {fmt_bytes(x.n['kv_needed'])} of RAM for its KV cache ({fmt_bytes(x.n['requested'])} share "
                f"less the {fmt_bytes(x.n['this_process'])} it holds) and found {fmt_bytes(x.n['available'])} of the node's "
                f"{fmt_bytes(x.n['total'])} available: {fmt_bytes(x.n['other_processes'])} is held outside the worker, by other processes"),
    # (fixZ) with --kv-cache-memory-bytes the message's figures do not tell the worker's own RAM (its weights) from other
    # processes', which the message names: runner-up to host-ram (rules_host)
    R("other-process", 1.0, lambda x: x.kind == "vllm.cpu_node" and x.ev.get("form") == "kv_explicit",
      "vLLM's CPU worker names other processes' RAM as a cause (\"reduce CPU memory used by other processes\"); its figures "
      "do not tell the worker's own use from theirs"),
    # vLLM woke from sleep mode and could not map back the memory its sleep released: it fitted before, so another user of
    # the card took it meanwhile (a colocated trainer in RL); over the sleep-mode budget row (other 2.5), which reads the
    # start-up sizing the run already got past
    R("other-process", 4.0, cumem_wake_up,
      "vLLM's cumem allocator could not map back, in wake_up, the memory its sleep released: the same allocations fitted "
      "before the sleep, so something else on the card took that memory meanwhile, in RL the colocated trainer; leave it "
      "room (a lower gpu_memory_utilization, or the RL framework's setting for it), or have the trainer offload and "
      "torch.cuda.empty_cache() before wake_up"),
    # The Spark RAPIDS plugin sizes its pool from the card's total (allocFraction, 0.9 by default) and finds less free at executor
    # start, before this executor allocated anything: more than a tenth of the card is held outside it, by another executor
    # Spark placed on the same GPU (no GPU requested per executor) or another program (round 59; NVIDIA/spark-rapids#1674)
    R("other-process", 4.0, kind("rapids.rmm_init"),
      lambda x: "the RAPIDS plugin's pool of " + fmt_bytes(x.req) + ", sized from the card's total, is larger than the "
      + (fmt_bytes(x.n["free"]) + " " if x.n.get("free") is not None else "") + "free when the executor started, before it "
      "allocated anything: other processes hold the rest, often another executor Spark put on the same GPU; give each executor "
      "its own GPU (spark.executor.resource.gpu.amount=1, spark.task.resource.gpu.amount=1/spark.executor.cores), free the "
      "card, or lower spark.rapids.memory.gpu.allocFraction"),
    # (round 93) TensorFlow (or JAX) refusing a tensor in a process pool's worker (a ProcessPoolExecutor's or multiprocessing Pool's
    # frame on the stack): each worker is a process that maps most of the card at its first GPU op, so the pool's other workers
    # hold what this one lacks; over the op-level buffer row (activations 1.5), which reads one process alone
    R("other-process", 3.0, pool_worker_prealloc,
      "TensorFlow (or JAX) could not allocate a tensor in a process pool's worker: each worker process maps most of the GPU for "
      "itself at its first GPU op, so the pool's other workers hold the memory; one GPU process fed by the others (the rest on "
      "the CPU), fewer workers, or memory growth on (TF_FORCE_GPU_ALLOW_GROWTH=true, XLA_PYTHON_CLIENT_PREALLOCATE=false)"),
    # (round 94) Kaldi's allocator refused a region while the card's free memory it printed (GetFreeGpuMemory, the same moment) was
    # at least the request: the memory was there, another process took it between (Kaldi's own message names sharing the GPU);
    # over the program's-own-call rows (activations 1.5)
    R("other-process", 2.0, lambda x: x.kind == "cuda.driver" and x.ev.get("form") == "kaldi_region"
      and x.n.get("free") is not None and x.n.get("requested") and x.n["free"] >= x.n["requested"],
      "Kaldi's allocator could not get {req:b} although the card reported {n[free]:b} free at that moment: another process on "
      "the GPU took it (Kaldi's message names sharing the GPU); exclusive mode (nvidia-smi -c 3) with --use-gpu=wait, or one "
      "job per GPU"),
    # (tri68) the same refusal where the card's free memory was below the region, but Kaldi's allocator report just before it
    # (PrintMemoryUsage) shows the card's used memory past half the card and past the region beyond what this process's regions
    # hold (predicates.kaldi_held_outside): another process on the GPU holds it; over the driver-level rows (other 1.0)
    R("other-process", 2.0, lambda x: kaldi_held_outside(x) is not None,
      lambda x: "Kaldi's allocator holds {} while {} more of the card is in use: another process on the GPU holds it (Kaldi's "
      "message names sharing the GPU); exclusive mode (nvidia-smi -c 3) with --use-gpu=wait, or one job per GPU".format(
          *map(fmt_bytes, kaldi_held_outside(x)))),
    # (round 101) PyTorch's message quoted without its capacity sentence, its processes' sentences kept: another process
    # listed ("Process N has X memory in use") beside this one's own ("This process has M memory in use"), X past a desktop's
    # and the request; over the cut message's activations row (1.2)
    R("other-process", 2.0, listed_others_cut,
      lambda x: "another process on the card holds " + fmt_bytes(x.n["other_processes"]) + " (PyTorch's message lists it "
      "beside this process's " + fmt_bytes(x.n["this_process"]) + "; the card's figures are cut): stop or move that program "
      "(nvidia-smi lists it), or offload part of this one"),
    # (op53) the same cut message listing two or more processes and none as this process: PyTorch names its own pid "this
    # process" (reportProcessMemoryInfo), so at most one entry is this one (a container's host pid) and the rest are others';
    # over the cut message's activations row (1.2), as the row above
    R("other-process", 2.0, listed_several_cut,
      lambda x: "PyTorch's message lists processes on the card holding " + fmt_bytes(x.n["other_processes"]) + " and names none "
      "as this process (it prints its own as \"this process\"): at most one entry, the largest " + fmt_bytes(x.ev["others_largest"])
      + ", can be this one in a container, so other processes hold at least " + fmt_bytes(x.n["other_processes"] - x.ev["others_largest"])
      + "; stop or move them (nvidia-smi lists them), or run the jobs one after another"),
    # (round 104) a model's placement (a loading frame or source line) fails with PyTorch's own reserved memory a small share of the
    # card and more than half of it held outside PyTorch: the load did not fill the card, another program had; over the loading
    # frame and source rows (weights-exceed-vram 3.0 + 2.0) with the outside-PyTorch row (3.0), as the 0-bytes row reads it
    R("other-process", 2.5, placing_taken,
      lambda x: f"the model was being placed on the card with PyTorch holding only {fmt_bytes(x.reserved)} of {fmt_bytes(x.total)}, "
                f"while {fmt_bytes(x.outside)} was used outside PyTorch: the card was taken before the model came; free it "
                "(nvidia-smi lists the processes), or wait for a free card (a scheduler, CUDA_VISIBLE_DEVICES)"),
    # (round 114) nvidia-smi's compute-apps table (CSV) printed after the failure, by the harness that ran the program, lists
    # processes still on the card holding SMI_APPS_MIN or more: the failed program had exited, so that memory is others'
    R("other-process", 4.0, lambda x: (smi_apps_after(x) or 0) >= SMI_APPS_MIN,
      lambda x: "nvidia-smi's compute-apps table, printed after the failure, lists processes still on the card holding "
      + fmt_bytes(smi_apps_after(x)) + ": another program (a second server, a job of another lane) had the memory this one "
      "needed; stop it or wait until it exits, then run again"),
    # (tri79) nvidia-smi's process table beside a CUDA failure whose message lists no process: its graphics ("G") rows on the
    # failing card, never the failing program (a CUDA program holds a compute context, "C" or "C+G"), hold past a desktop's
    # share and the shortfall (smi_procs.graphics_hold); over the driver-level and working-buffer rows (other 1.0, activations 1.5)
    R("other-process", 2.8, graphics_hold,
      lambda x: "nvidia-smi's process table lists graphics processes (the display server, desktop, browser) holding "
      + fmt_bytes(graphics_held(x)) + " on the card that failed: other programs hold that memory; close them, or move the "
      "display to another GPU (or the integrated one) and run on a card without it"),
    # (round 121) the GPU (CUDA; rev14 S3: ROCm's "HIP error" is the same kind) ran out of memory and Ollama's discovery record
    # right after lists the CPU as its compute: the failure was its GPU discovery's (a context on the card, nothing of a model
    # placed yet), so the card was already full, held by another program (a second server on the same card or the same unified
    # pool); over Ollama's estimate row (other 1.5), which reads a runner that had placed layers. Ollama keeps the CPU-only list
    # until it is restarted
    R("other-process", 3.0, ollama_discovery_cpu,
      "the GPU ran out of memory while Ollama discovered its GPUs, and Ollama then listed the CPU as its only inference compute: "
      "discovery creates a context on the card and places no model, so the card's memory was already held by another program "
      "(a second server on the same card or unified pool); free it (nvidia-smi lists who holds it), then restart Ollama so it "
      "discovers the GPU again (it keeps the CPU-only list until restarted)"),
    R("other-process", 6.0, kind("sglang.unbalanced"),
      "SGLang found the tensor-parallel GPUs' free memory unbalanced at start: another process (or a leaked container's "
      "allocation) holds memory on some of them; free those GPUs, or pick others with CUDA_VISIBLE_DEVICES"),
]
