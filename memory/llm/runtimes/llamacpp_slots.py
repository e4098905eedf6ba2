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
    """One slot may use all of -c: a unified cache (-kvu, or -np 1) where the program gives a slot all of it
    (unified_reach)."""
    return runtime == "llama.cpp" and bool(s.get("unified")) and unified_reach(s)


def unified_reach(s: dict) -> bool:
    """A unified cache lets one slot use all of -c: llama_context's n_ctx_seq is n_ctx with kv_unified from b5913
    (the library, --llamacpp-entrypoint library), but llama-server gave each slot n_ctx_slot = n_ctx / n_parallel
    (server.cpp init) whatever -kvu said until ggml-org/llama.cpp#16736 (b6925: "-np N ... is no longer used to change
    the per-slot context"; SERVER_SLOT_CAP). ik_llama.cpp is taken as upstream's newest (not read)."""
    if not at_least(s.get("version"), *UNIFIED_SPLIT):
        return False
    return s.get("entrypoint") == "library" or bool(s.get("ik")) or at_least(s.get("version"), *SERVER_SLOT_CAP)


def ctx_cap(runtime: str, s: dict, parallel: int, model_max: int) -> int:
    """The longest -c / --max-model-len / num_ctx the largest-context search goes to. llama.cpp: model_max x -np, split
    or unified: split, each slot then holds model_max; unified, the -np slots together fill a pool that large, each at
    most model_max (a slot never uses more than the trained context), so a larger -c serves no slot. Ollama's num_ctx is
    a slot's already (it starts llama.cpp with -c num_ctx x parallel): model_max."""
    if runtime == "llama.cpp":
        return model_max * max(parallel, 1)
    return model_max


# llama-server caps a slot at n_ctx_train from ggml-org/llama.cpp#16736 (cd5e3b575, "server : support unified cache
# across slots"; its build prints system_fingerprint "b6925-cd5e3b575"; ggml-org/llama.cpp#17459 names cd5e3b57 as the
# commit that brought the cap). Before, server.cpp gave a slot n_ctx / n_parallel and ran it past n_ctx_train. The
# library (llama_context, what llama-cli and a binding run: --llamacpp-entrypoint library) only warns: "n_ctx_seq (N) >
# n_ctx_train (M) -- possible training context overflow".
SERVER_SLOT_CAP = (6925,)


# llama-server given no -np starts 4 slots over one unified cache of -c from #16736 (b6925, main(): "setting n_parallel
# = 4 and kv_unified = true (add -kvu to disable this)"), keyed on n_parallel == 1 && !kv_unified: an explicit -np 1
# got 4 slots too (ggml-org/llama.cpp#17300, b7079) until #17997 (b7433, "arg: clarify auto kvu/np being set on
# server": -np defaults to -1, auto, and only the auto turns -kvu on). The command therefore names -np from b6925, and
# -np 1 takes -kvu before b7433 (one slot either way: n_ctx_seq is all of -c).
SERVER_AUTO_SLOTS = SERVER_SLOT_CAP
NP_AUTO = (7433,)


def np_printed(s: dict) -> bool:
    """The llama-server command names -np, 1 too: from b6925 a server given none starts 4 slots (not ik_llama.cpp:
    not read)."""
    return not s.get("ik") and at_least(s.get("version"), *SERVER_AUTO_SLOTS)


def one_slot_kvu(s: dict) -> bool:
    """-np 1 needs -kvu beside it to stay one slot: builds b6925 to b7432 (NP_AUTO)."""
    return np_printed(s) and not at_least(s.get("version"), *NP_AUTO)


def server_caps(s: dict) -> bool:
    """llama-server on a build that caps a slot at the trained context (not the library, not ik_llama.cpp: not read)."""
    return s.get("entrypoint") != "library" and not s.get("ik") and at_least(s.get("version"), *SERVER_SLOT_CAP)


def slot_reach(ctx: int, max_ctx: int | None, s: dict) -> int:
    """Tokens one slot of a unified cache may hold: all of -c, at most the trained context where llama-server caps it."""
    return min(ctx, max_ctx) if max_ctx and server_caps(s) else ctx


def over_train_note(max_ctx: int | None, ctx: int, parallel: int, all_c: bool, s: dict) -> str | None:
    """The note for a slot's context above the model's trained context (aud66a F6), None when it is within it."""
    slot_ctx = ctx if all_c else ctx // max(parallel, 1)
    if not max_ctx or slot_ctx <= max_ctx:
        return None
    head = f"{slot_ctx} tokens a slot is above the model's trained context ({max_ctx:,}): "
    overflow = ("warns of a possible training context overflow (n_ctx_train) and runs it; output past it may degrade "
                "unless the GGUF carries rope scaling (YaRN)")
    if s.get("entrypoint") == "library":
        return head + "llama.cpp's library (llama_context) " + overflow
    if s.get("ik"):
        return (head + "llama.cpp's library " + overflow + " (upstream llama-server from b6925 caps each slot at the "
                "trained context; ik_llama.cpp's server is not read here)")
    if not server_caps(s):
        return head + "llama-server before b6925 " + overflow
    # the cache is allocated at -c all the same: split slots each waste what is past the cap, a unified pool only what
    # more than -np capped slots can fill
    unusable = max(0, ctx - max_ctx * max(parallel, 1)) if all_c else (slot_ctx - max_ctx) * max(parallel, 1)
    text = (head + f"llama-server caps each slot at {max_ctx:,} tokens (\"the slot context ({slot_ctx}) exceeds the "
            f"training context of the model ({max_ctx}) - capping\")")
    if unusable:
        return text + (f"; the KV cache is still allocated for -c {ctx}, so the memory of its {unusable:,} cells past "
                       "the cap is allocated but unusable (the figures above count it): -c "
                       f"{max_ctx * max(parallel, 1)} holds as much")
    return text + f"; the {parallel} slots together can still fill the -c {ctx} cache"
