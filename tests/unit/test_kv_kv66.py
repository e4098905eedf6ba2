"""Task kv66: vLLM's MRotaryEmbedding (layers/rotary_embedding/mrope.py, from vllm bf3b79efb of 2025-02-05 through
a65f93fb2) builds its cos/sin cache over cache_max_position_num = max_position_embeddings * 4 positions, in the model's
dtype (RotaryEmbeddingBase: cache.to(dtype), a non-persistent buffer of the model, so inside "Model loading took").
get_rope picks it wherever the rope has an mrope_section (Qwen2-VL to Qwen 3.5+). Expected figures by hand from the
built-ins' fields: positions x rotary dim x 2 B."""
from dataclasses import replace

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

H100 = dict(vram=79.19 * GiB, gpu_memory_utilization=0.9)


def _table(model, version="0.19.0", **kw):
    spec = llm.describe(model=model)
    args = dict(ctx=4096, runtime_version=version, weights_dtype="bf16", **H100)
    args.update(kw)
    return (llm.plan(spec, "vllm", **args)["weights"]
            - llm.plan(replace(spec, rope_cache_elems=0), "vllm", **args)["weights"])


def test_qwen3_vl_table_is_four_times_the_positions():
    # 262,144 positions x 4 x 128 rotary values x 2 B = 256 MiB (kv counted 64 MiB before)
    assert _table("Qwen3-VL-8B", parallel=1) == 268_435_456


def test_qwen35_table_whole_on_every_rank():
    # Qwen3.6-27B: partial_rotary_factor 0.25 of 256 = 64 values; 262,144 x 4 x 64 x 2 B = 128 MiB on each of 2 GPUs
    assert _table("Qwen3.6-27B", parallel=2) == 134_217_728


def test_qwen25_vl_before_and_after_v072():
    # Qwen2.5-VL-7B: 128,000 positions x 128 x 2 B = 32,768,000 B; x 4 from 0.7.2 on
    assert _table("Qwen2.5-VL-7B", version="0.7.2", parallel=1) == 131_072_000
    assert _table("Qwen2.5-VL-7B", version="0.7.1", parallel=1) == 32_768_000


def test_plain_rope_unchanged():
    assert _table("Llama-3.1-8B", parallel=1) == 131072 * 128 * 2
