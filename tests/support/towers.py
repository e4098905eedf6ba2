"""What a multimodal checkpoint's towers add to vLLM's weights: the plan as given minus the plan with
--language-model-only (vLLM then builds no tower), in bytes, with the weights line that names them."""
from gpu_garden.memory.llm import kv as llm


def vllm_tower_bytes(model: str, ctx: int, weights_dtype: str = "bf16") -> tuple[int, str]:
    s = llm.describe(model=model)
    r = llm.plan(s, "vllm", ctx=ctx, weights_dtype=weights_dtype)
    lmo = llm.plan(s, "vllm", ctx=ctx, weights_dtype=weights_dtype, language_model_only=True)
    return r["weights"] - lmo["weights"], r["weights_how"]
