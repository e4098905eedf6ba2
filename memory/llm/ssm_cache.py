"""vLLM's --mamba-ssm-cache-dtype for a gated-DeltaNet / Mamba-2 state (moved out of cache.py, which re-exports it, to
keep that module under 600 lines when DeepSeek-V4's dispatch lines came in, task dsv4)."""
from dataclasses import replace

from ..errors import UserError
from .spec import LLMSpec

# vLLM --mamba-ssm-cache-dtype (CacheConfig.mamba_ssm_cache_dtype; MambaDType "auto", "float32", later also "float16",
# then "bfloat16", vllm/config/cache.py): the element of a gated-DeltaNet / Mamba-2 layer's temporal (ssm) state. "auto"
# keeps the config's (params.recurrent_state: Qwen 3.5+ mamba_ssm_dtype float32, Nemotron-H's mamba_ssm_cache_dtype);
# the conv state keeps the model's dtype (--mamba-cache-dtype, not modelled). The state page sets the unified attention
# block (vllm_layout): Qwen3.8-27B at fp8 KV takes 1568 tokens with a float32 state and 800 with float16, as
# alpharomercoma/qwen3.8-27b-rtx4090-vllm docs/benchmarks/FINDINGS.md (6) prints for its --mamba-ssm-cache-dtype float16
# runs ("Attention blocks are stretched to the size of one GDN state page: 800 tokens at fp8 KV")
SSM_CACHE_DTYPES = {"auto": None, "float32": 4, "float16": 2, "bfloat16": 2}
# the first vLLM whose MambaDType accepts each value (vllm/config/cache.py in the PyPI sdists: 0.10.0 has no flag; 0.10.1
# to 0.12.0 Literal["auto", "float32"]; "float16" from 0.13.0 (0.12.0 without, 0.13.0 / 0.14.0 / 0.17.1 / 0.20.0 /
# 0.21.0 with); "bfloat16" from 0.22.0 (0.21.0 without, 0.22.0 / 0.24.0 with))
SSM_CACHE_DTYPE_FROM = {"float32": (0, 10, 1), "float16": (0, 13, 0), "bfloat16": (0, 22, 0)}


def with_ssm_cache_dtype(spec: LLMSpec, name: str | None) -> LLMSpec:
    """The spec with its state layers' ssm element as vLLM's --mamba-ssm-cache-dtype `name` sets it (None / "auto": as
    the config says)."""
    key = str(name or "auto").lower()
    if key not in SSM_CACHE_DTYPES:
        raise UserError(f"--mamba-ssm-cache-dtype must be one of {', '.join(SSM_CACHE_DTYPES)}, got {name!r}")
    if SSM_CACHE_DTYPES[key] is None:
        return spec
    if not spec.linear_state:
        raise UserError(f"--mamba-ssm-cache-dtype: {spec.name} has no gated-DeltaNet or Mamba-2 state layer whose "
                        "state vLLM pages")
    conv, cb, ssm, _ = spec.linear_state
    return replace(spec, linear_state=(conv, cb, ssm, SSM_CACHE_DTYPES[key]))
