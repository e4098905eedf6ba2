"""(fix66c) Ollama's compute buffer: when the allocation that failed is the graph allocator's compute buffer (its own
message, or ggml_gallocr_reserve_n's "failed to allocate CUDA1 buffer of size N": gallocr reserves only compute buffers,
the same test as case.py's ggml stage "compute-failed"), the answer's guide is ollama-activations (num_batch, num_ctx,
flash attention), not ollama-kv-cache, whose 8-bit cache does not shrink a compute buffer. The guide carries a kind no
event has (ollama.compute_buffer), so guides.select never picks it by itself."""

GUIDE = "ollama-activations"


def failed_compute_buffer(case) -> bool:
    """(fix66f, rev66b F11) case.py's own stage reading, with its order: a KV cache that failed first stays the KV cache's
    (a log whose KV cache failed and whose gallocr then refused was read as the compute buffer's)."""
    return getattr(case, "ggml_stage", None) == "compute-failed"


def params(case, env) -> dict:
    return {"ollama_compute": True} if env.get("runtime") == "ollama" and failed_compute_buffer(case) else {}


def guide(found, top, params, guides_mod):
    """The rendered guide for the answer: ollama-activations for activations on Ollama's compute buffer, else `found`."""
    if top != "activations" or not params.get("ollama_compute"):
        return found
    return guides_mod.render(guides_mod.load_all()[GUIDE], params)
