"""Cache settings llama.cpp's llama_init_from_model refuses (it returns no context: llama-server exits 1), refused here
as the runtime refuses them rather than sized (errors.RuntimeRefusal: kv exits 1). Read in ggml-org/llama.cpp
src/llama-context.cpp llama_init_from_model (the stored tree at 001d906a; line numbers not counted there)."""
from ..errors import RuntimeRefusal
from .cache import KV_BYTES
from .runtimes import at_least, llamacpp as LC


def quantized_v_without_flash(runtime, v_type, draft, s, knobs) -> None:
    """-ctv (or -ctvd) quantized with -fa off: 'flash_attn_type == LLAMA_FLASH_ATTN_TYPE_DISABLED' with
    ggml_is_quantized(type_v) -> "quantized V cache requires flash_attn to be enabled", return nullptr (-fa auto switches
    it on there); builds before llama.cpp#25871 (LC.MLA_ONE_TYPE_FROM) word it "V cache quantization requires
    flash_attn". Only an -fa off the user gave is refused: without one, kv switches it on and prints -fa.
    ik_llama.cpp takes a quantized V cache without flash attention for MLA, so it is left to plan.py's note."""
    quantized = [t for t in (v_type, draft) if t and KV_BYTES[t] < 2]
    if runtime != "llama.cpp" or knobs.get("flash_attn") is not False or not quantized or s.get("ik"):
        return
    said = ("quantized V cache requires flash_attn to be enabled" if s["version"] is None
            or at_least(s["version"], *LC.MLA_ONE_TYPE_FROM) else "V cache quantization requires flash_attn")
    raise RuntimeRefusal(f"a {quantized[0]} V cache with --flash-attn off: llama.cpp refuses to create the context "
                    f"(llama_init_from_model: \"{said}\"); give --flash-attn on or auto, or an f16 V cache")


def mla_mixed_types(spec, runtime, kv, s) -> None:
    """An MLA model's latent cache with -ctk and -ctv apart: llama_init_from_model refuses
    'model->hparams.is_mla() && params.type_k != params.type_v' ("model does not support different K (%s) and V (%s)
    cache types"): its V is a view of the K latent. Builds of the latent+v or full MLA cache (mla_cache) kept a V
    cache of their own and are not refused here; nor is ik_llama.cpp, nor a build before llama.cpp#25871, which brought
    the refusal (LC.MLA_ONE_TYPE_FROM)."""
    v = s.get("kv_v") or kv
    if runtime != "llama.cpp" or not spec.mla or v == kv or s.get("mla_cache") != "latent" or s.get("ik"):
        return
    if not at_least(s["version"], *LC.MLA_ONE_TYPE_FROM):  # older builds ran the mixed types
        return
    raise RuntimeRefusal(f"--kv-dtype {kv} with --kv-dtype-v {v} on {spec.name}'s MLA cache: llama.cpp refuses to create the "
                    f"context (llama_init_from_model: \"model does not support different K ({kv}) and V ({v}) cache "
                    "types\"; the V cache is a view of the K latent): give one type")
