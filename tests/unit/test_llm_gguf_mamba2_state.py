"""llama.cpp's recurrent state for a Mamba-2 GGUF of any arch (llama-hparams.cpp, one formula for every SSM arch):
n_embd_s = d_state x d_inner and n_embd_r = (d_conv - 1) x (d_inner + 2 x n_group x d_state), f32, per Mamba layer
and sequence. The Granite row is the metadata of unsloth's granite-4.0-h-tiny GGUF as gguf-dump prints it
(huggingface.co/unsloth/granite-4.0-h-tiny-GGUF: 40 blocks, 1536 wide, 12 heads, ssm conv 4, state 128, 1 group,
inner 3072); the dump shows head_count_kv's first six entries [0, 0, 0, 0, 0, 4]: the other attention layers are taken
at 15, 25 and 35 (one in ten, four in all). Every expected figure is hand arithmetic."""
from gpu_garden.memory.llm import cache as C
from gpu_garden.memory.llm.gguf import from_gguf_metadata


def _granite(**extra):
    a = "granitehybrid"
    meta = {"general.architecture": a, f"{a}.block_count": 40, f"{a}.embedding_length": 1536,
            f"{a}.feed_forward_length": 512, f"{a}.attention.head_count": 12,
            f"{a}.attention.head_count_kv": [4 if i % 10 == 5 else 0 for i in range(40)],
            f"{a}.ssm.conv_kernel": 4, f"{a}.ssm.state_size": 128, f"{a}.ssm.group_count": 1,
            f"{a}.ssm.inner_size": 3072, f"{a}.ssm.time_step_rank": 48, f"{a}.vocab_size": 100352}
    meta.update({f"{a}.{k}": v for k, v in extra.items()})
    return from_gguf_metadata(meta, {"blk.0.x.weight": (100, "F16", 50)}, name="granite-4.0-h-tiny.gguf")


def test_granite_hybrid_state_has_the_group_conv_rows():
    s = _granite()
    assert s.summary()["layer_kinds"] == {"full": 4, "mamba": 36}
    # a Mamba layer: 128 x 3072 = 393,216 SSM values + 3 x (3072 + 2 x 1 x 128) = 9,984 conv values = 403,200 f32
    # = 1,612,800 bytes; 36 layers: 58,060,800 (without the B/C rows 57,950,208)
    assert s.recurrent_state_per_seq == 58_060_800


def test_more_groups_widen_only_the_conv_rows():
    # 8 groups: 3 x (3072 + 2 x 8 x 128) = 15,360 conv values; (393,216 + 15,360) x 4 x 36 = 58,834,944
    assert _granite(**{"ssm.group_count": 8}).recurrent_state_per_seq == 58_834_944


def test_no_group_count_is_mamba1_conv_rows():
    # Jamba (Mamba-1; llama.cpp reads no ssm.group_count, so n_group 0): Jamba-v0.1's 32 layers, attention at 4 + 8k,
    # d_inner 8192, d_state 16, conv 4: 28 x 8192 x (16 + 3) x 4 = 17,432,576
    a = "jamba"
    meta = {"general.architecture": a, f"{a}.block_count": 32, f"{a}.embedding_length": 4096,
            f"{a}.attention.head_count": 32, f"{a}.attention.head_count_kv": [8 if i % 8 == 4 else 0 for i in range(32)],
            f"{a}.ssm.conv_kernel": 4, f"{a}.ssm.state_size": 16, f"{a}.ssm.inner_size": 8192,
            f"{a}.ssm.time_step_rank": 256, "tokenizer.ggml.tokens": ["a"] * 100}
    assert from_gguf_metadata(meta, None, name="jamba.gguf").recurrent_state_per_seq == 17_432_576


def test_llamacpp_keeps_the_state_per_slot_beside_the_kv():
    # two slots: 2 x 58,060,800 of state; KV: 4096 cells x 4 layers x K,V x 4 heads x 128 x 2 bytes = 33,554,432
    kvd = C.kv_cache(_granite(), 4096, 2, "f16", "llama.cpp")
    assert (kvd["recurrent_state"], kvd["total"]) == (116_121_600, 116_121_600 + 33_554_432)
