"""Triage's rule rows for *other-process* that a runtime's own line decides (rows, not code: the row format is in rules.py's
docstring). rules.py puts them at their place in the other-process section, after Ollama's eviction row."""
from .predicates import cumem_wake_up, kind
from .rule_row import Rule

R = Rule
RUNTIME_HELD = [
    # vLLM woke from sleep mode and could not map back the memory its sleep released: it fitted before, so another user of
    # the card took it meanwhile (a colocated trainer in RL); over the sleep-mode budget row (other 2.5), which reads the
    # start-up sizing the run already got past
    R("other-process", 4.0, cumem_wake_up,
      "vLLM's cumem allocator could not map back, in wake_up, the memory its sleep released: the same allocations fitted "
      "before the sleep, so something else on the card took that memory meanwhile, in RL the colocated trainer; leave it "
      "room (a lower gpu_memory_utilization, or the RL framework's setting for it), or have the trainer offload and "
      "torch.cuda.empty_cache() before wake_up"),
    R("other-process", 6.0, kind("sglang.unbalanced"),
      "SGLang found the tensor-parallel GPUs' free memory unbalanced at start: another process (or a leaked container's "
      "allocation) holds memory on some of them; free those GPUs, or pick others with CUDA_VISIBLE_DEVICES"),
]
