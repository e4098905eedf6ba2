"""llama.cpp's slots and the context each holds: how -c is shared by -np slots, and the longest -c worth asking for.

src/llama-context.cpp (llama_context's constructor): with kv_unified, n_ctx_seq = n_ctx (every sequence may use all of
-c); without it, n_ctx_seq = n_ctx / n_seq_max, padded to 256, so each of the -np slots holds -c / -np. Builds before
b5913 (UNIFIED_SPLIT: ggml-org/llama.cpp#14363, the split streams) had one cache and no -kvu, and llama-server gave each
slot n_ctx_slot = n_ctx / n_parallel (server.cpp init) -- the same split. llama-server caps a slot at the model's
n_ctx_train (server-context.cpp load_model: "the slot context (%d) exceeds the training context of the model (%d) -
capping"; read in ggml-org/llama.cpp's server-context.cpp, seen at b8850 in ggml-org/llama.cpp#22140 and at b10754,
where n_ctx_slot() still returns min(n_ctx_seq, n_ctx_train)), so a slot never uses more than the trained context."""
from . import at_least
from .llamacpp import UNIFIED_SPLIT


def slot_all(runtime: str, s: dict) -> bool:
    """One slot may use all of -c: a unified cache (-kvu, or -np 1) on a build with the split streams."""
    return runtime == "llama.cpp" and bool(s.get("unified")) and at_least(s.get("version"), *UNIFIED_SPLIT)


def ctx_cap(runtime: str, s: dict, parallel: int, model_max: int) -> int:
    """The longest -c / --max-model-len / num_ctx the largest-context search goes to. llama.cpp with slots that split -c
    (no unified cache): model_max x -np, each slot then holding model_max; with a unified cache every slot may use all
    of -c, so model_max. Ollama's num_ctx is a slot's already (it starts llama.cpp with -c num_ctx x parallel): model_max."""
    if runtime == "llama.cpp" and not slot_all(runtime, s):
        return model_max * max(parallel, 1)
    return model_max
