"""(fix66g) vLLM's --quantization as the precision its load needs and the one its weights keep (should_fit.py reads it).

- fp8 and ptpc_fp8 on a checkpoint whose name shows no quantisation quantise in flight: vLLM's Fp8LinearMethod
  (model_executor/layers/quantization/fp8.py: create_weights) makes each weight in params_dtype when the checkpoint is
  not fp8-serialised and process_weights_after_loading converts it after the load, so the load needs the 16-bit size
  (vllm-project/vllm#31273: Qwen2.5-72B, 135.5 GiB in bf16 on a 139.72 GiB card). The weights then keep 1 byte.
- bitsandbytes quantises to 4 or 8 bits as the checkpoint says: 8-bit when the name says 8bit/int8, 4-bit when it says
  4bit, else no size (no verdict).
- any other method: its size as kv gives it (llm.flags VLLM_QUANTIZATION), load and kept alike."""
import re

HALF_LOAD = ("fp8", "ptpc_fp8")
_BNB8 = re.compile(r"(?i)8[-_]?bit|int8")
_BNB4 = re.compile(r"(?i)4[-_]?bit")


def precision(f, name, spec, least=False):
    """(load, kept): kv's weights dtype for the load and for the weights after it; None: the checkpoint's own
    (half precision or the name's format); kept False: a method kv has no size for. least: the smallest the weights can
    be (over_card: weights over the card even so), so bitsandbytes whose name gives no bits counts 4-bit."""
    q = f["vllm_wflags"].get("quant")
    if not q:
        return None, None
    if q == "bitsandbytes":
        kept = ("int8" if _BNB8.search(name) else "bnb-4bit" if _BNB4.search(name) or least else False)
        return kept, kept
    from ..llm.flags import VLLM_QUANTIZATION
    kept = VLLM_QUANTIZATION.get(q, False)
    if q in HALF_LOAD and spec is not None and not spec.quant:
        return None, kept
    return kept, kept
