"""The --kv-cache-memory pool kv suggests beside a vLLM command (aud67a F10). vLLM's kv_cache_memory_bytes is one
GPU's KV cache in bytes and, when given, ignores gpu_memory_utilization (vllm/config/cache.py CacheConfig
kv_cache_memory_bytes: "Size of KV Cache per GPU in bytes ... (when not-None) ignores gpu_memory_utilization"). The
default share's pool (vllm.autofit, from the request's own figures) holds the request only where it fits as asked;
where it does not, that pool is smaller than one request of the asked --max-model-len (the refusal kv prints) and than
the printed command's. Then, where it is short of the command's, the pool is the one the printed command needs: its --max-model-len at its KV cache dtype
(the plan's chosen kv_total, the figure its "with the flags" line gives); no pool where nothing fits."""

FLAG = "--kv-cache-memory "


def command_pool(out: dict) -> None:
    """out["autofit"]'s --kv-cache-memory entry for a vLLM plan that does not fit as asked, in place."""
    af = out.get("autofit") or []
    at = next((i for i, a in enumerate(af) if a["flag"].startswith(FLAG)), None)
    if at is None or out.get("runtime") != "vllm" or out.get("fits_as_requested") or out.get("pool_fixed"):
        return  # fits as asked: the default share's pool holds it; a pool of the user's own: vllm.autofit's pool_fit
    ch = out.get("chosen")
    if not ch or not out.get("command") or not ch.get("kv_total"):
        del af[at]  # no command that fits: no pool to suggest
        return
    if int(af[at]["flag"][len(FLAG):]) >= ch["kv_total"]:
        return  # the default share's pool holds the command's context already (a refusal of the asked length alone)
    af[at] = {"flag": f"{FLAG}{int(ch['kv_total'])}",
              "reason": f"vLLM >= 0.10.1: a fixed KV pool in bytes, one GPU's, in place of the share (vLLM then ignores "
                        f"--gpu-memory-utilization): what the command above needs, {ch['ctx']:,} tokens of KV cache "
                        f"{ch['kv_dtype']}"}


def check_flag_version(runtime, version) -> None:
    """--kv-cache-memory given to a vLLM release without the flag (before 0.10.1, vllm.KV_CACHE_MEMORY: the gate kv's own
    suggestion keeps) is refused (rev67f F9): the printed command carried a flag that vLLM refuses. The CLI's check;
    llm.plan still takes the knob, a fixed pool for older releases' figures."""
    from . import at_least, parse_version
    from .vllm import KV_CACHE_MEMORY
    if runtime == "vllm" and version and not at_least(parse_version(version, runtime), *KV_CACHE_MEMORY):
        from ...errors import UserError
        raise UserError(f"--kv-cache-memory is accepted from vLLM {'.'.join(map(str, KV_CACHE_MEMORY))} "
                        f"(CacheConfig.kv_cache_memory_bytes); vLLM {version} has no such flag: give "
                        "--gpu-memory-utilization instead, or a newer --runtime-version")
