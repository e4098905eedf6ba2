"""mend56: --weights-gib beside weights a spec already has is refused by what sized them, read from the spec's own
gguf_sized flag (set where a GGUF's tensor table sizes the weights, gguf.py), not from the word GGUF in its source."""
from dataclasses import replace

import pytest

from gpu_garden.memory.llm import kv as llm, unsloth
from gpu_garden.memory.llm.spec import from_gguf_metadata

GiB = 2 ** 30
NOT_BOTH = "give --gguf FILE or --weights-gib, not both"


def test_a_gguf_tensor_table_sets_the_flag():
    meta = {"general.architecture": "llama", "llama.block_count": 2, "llama.embedding_length": 256,
            "llama.attention.head_count": 4, "llama.attention.head_count_kv": 2, "llama.feed_forward_length": 512,
            "tokenizer.ggml.vocab_len": 1000}
    tensors = {"token_embd.weight": (256_000, "Q8_0", 256_000), "blk.0.attn_q.weight": (65_536, "F16", 32_768)}
    assert from_gguf_metadata(meta, tensors).gguf_sized
    assert not from_gguf_metadata(meta).gguf_sized  # metadata alone sizes no weights


def test_the_refusal_follows_the_flag_not_the_word_gguf():
    # deliberate error checked: the old test ("GGUF" in weights_source) gives the GGUF message to the first spec below
    # (a safetensors index named after a GGUF export) and "drop the flag, sized from tensor table" to the second
    s = llm.describe(model="Qwen/Qwen3.6-27B")
    named = replace(s, weights_bytes=30 * GiB, weights_source="Qwen3.6-27B-GGUF-export.safetensors.index.json total_size")
    with pytest.raises(llm.UserError) as e:
        unsloth.given(named, 33 * GiB)
    assert NOT_BOTH not in str(e.value) and "sized already, from Qwen3.6-27B-GGUF-export.safetensors.index.json" \
        in str(e.value) and "drop the flag" in str(e.value)
    table = replace(s, weights_bytes=30 * GiB, weights_source="tensor table", gguf_sized=True)
    with pytest.raises(llm.UserError, match=NOT_BOTH):
        unsloth.given(table, 33 * GiB)
    # no weights yet: the figure is taken
    assert unsloth.given(s, 33 * GiB).weights_bytes == 33 * GiB
