"""NVIDIA Nemotron 3 Nano 30B-A3B (nemotron_h): layers from hybrid_override_pattern, the Mamba-2 state as llama.cpp
and vLLM keep it, the attention layers' KV. Every expected figure is hand arithmetic on the published config
(huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 config.json): 52 layers, pattern
MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME (23 Mamba-2, 6 attention, 23 MoE), 2 KV heads x 128, Mamba-2
64 heads x 64, 8 groups, d_state 128, conv 4, mamba_ssm_cache_dtype float32."""
import json

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.llm import cache as C
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import MODELS_DIR, from_config

NANO = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B"
CONV_VALUES = (4 - 1) * (64 * 64 + 2 * 8 * 128)   # (d_conv - 1) x (d_inner + 2 n_group d_state) = 18,432
SSM_VALUES = 64 * 64 * 128                         # heads x head_dim x d_state = d_state x d_inner = 524,288
ATTN_TOKEN = 6 * 2 * 2 * 128 * 2                   # 6 attention layers x K,V x 2 heads x 128 x 2 bytes = 6,144


def test_layers_follow_the_pattern():
    s = llm.describe(model=NANO)
    assert s.summary()["layer_kinds"] == {"full": 6, "mamba": 23, "ffn": 23}
    assert [i for i, k in enumerate(s.layer_kinds) if k == "full"] == [5, 12, 19, 26, 33, 42]


def test_parameters_by_hand_match_the_published_total():
    d, V = 2688, 131072
    mamba = d * (2 * 4096 + 2 * 8 * 128 + 64) + 4096 * d + 6144 * 5 + 3 * 64 + 4096 + d
    attn = d * 32 * 128 + 2 * d * 2 * 128 + 32 * 128 * d + d
    moe = 128 * 2 * d * 1856 + 2 * d * 3712 + 128 * d + 128 + d
    total = 23 * mamba + 6 * attn + 23 * moe + 2 * V * d + d
    s = llm.describe(model=NANO)
    assert s.params == total == 31_577_940_288     # NVIDIA's model card: 31.6 B total
    assert s.expert_params == 23 * 128 * 2 * d * 1856


def test_llamacpp_keeps_f32_state_per_slot_and_kv_for_attention_layers_only():
    s = llm.describe(model=NANO)
    assert s.recurrent_state_per_seq == 23 * (CONV_VALUES + SSM_VALUES) * 4 == 49_930_240
    r = C.kv_cache(s, 65536, 2, "f16", "llama.cpp")
    assert r["per_token"] == ATTN_TOKEN
    assert r["full_layers"] == 65536 * ATTN_TOKEN                 # 384 MiB, the 46 other layers none
    assert r["recurrent_state"] == 2 * 49_930_240                 # -np 2: two sequences' state


def test_vllm_pages_the_mamba2_state_with_the_attention_block():
    s = llm.describe(model=NANO)
    state_page = CONV_VALUES * 2 + SSM_VALUES * 4                # conv in bf16, temporal state in float32: 2,134,016
    block = 16 * -(-state_page // (16 * 1024))                   # one attention layer's token: 1,024 bytes -> 2,096
    lay = C.vllm_layout(s, "f16")
    assert (lay["block"], lay["page"]) == ({"full": block, "mamba": block}, block * 1024)
    assert (lay["size"], lay["groups"]) == (6, {"full": 1, "mamba": 4})   # 23 Mamba layers in groups of 6
    avail = 10 * 1024 ** 3
    blocks = avail // (6 * block * 1024)                         # 833 pages in each of the 6 tensors
    assert C.vllm_kv_tokens(s, avail, "f16", ctx=32768) == blocks // 5 * block == 347_936
    need = -(-32768 // block) + 4 * 1                            # 16 attention blocks, 1 state page in 4 groups (no
    #                                                              prefix caching, vLLM's default for a hybrid model)
    got = C.vllm_pool(s, avail, "f16", 32768)
    assert got["concurrency"] == pytest.approx(blocks / need)


def test_vllm_fp8_cache_doubles_the_block():
    s = llm.describe(model=NANO)
    state_page = CONV_VALUES * 2 + SSM_VALUES * 4
    assert C.vllm_layout(s, "fp8")["block"]["full"] == 16 * -(-state_page // (16 * 512)) == 4176


def _cfg(**kw):
    cfg = json.loads((MODELS_DIR / "NVIDIA-Nemotron-3-Nano-30B-A3B.json").read_text())
    cfg.pop("_source")
    cfg.update(kw)
    return cfg


def test_a_bf16_ssm_cache_halves_the_temporal_state():
    s = from_config(_cfg(mamba_ssm_cache_dtype="bfloat16"))
    assert s.linear_state == (CONV_VALUES, 2, SSM_VALUES, 2)
    assert C.vllm_layout(s, "f16")["block"]["full"] == 16 * -(-(CONV_VALUES * 2 + SSM_VALUES * 2) // (16 * 1024)) == 1072


@pytest.mark.parametrize("pattern, why", [("M*E", "52 characters"), ("M" * 51 + "X", "52 characters")])
def test_a_bad_pattern_is_refused(pattern, why):
    with pytest.raises(llm.UserError, match=why):
        from_config(_cfg(hybrid_override_pattern=pattern))


def test_mamba2_geometry_is_checked():
    with pytest.raises(llm.UserError, match="Mamba-2 geometry"):
        from_config(_cfg(n_groups=7))   # 64 heads are not a multiple of 7 groups


@pytest.mark.parametrize("runtime", ["ollama", "sglang"])
def test_runtimes_not_read_are_refused(runtime):
    with pytest.raises(llm.UserError, match="modelled for vLLM"):
        llm.plan(llm.describe(model=NANO), runtime=runtime, ctx=4096)


def test_cli_sizes_nano_for_llamacpp(capsys):
    rc = cli.main(["kv", "--model", NANO, "--runtime", "llama.cpp", "--ctx", "65536", "--weights-dtype", "Q6_K"])
    out = capsys.readouterr().out
    # 65,536 cells x 6,144 bytes = 384 MiB of KV, and one slot's state 49,930,240 bytes = 47.62 MiB beside it
    # (printed apart, as llama.cpp's log prints its KV and RS buffers: rev4 D1, task fix4)
    assert rc == 0 and "431.62 MiB" in out and "KV buffer 384.00 MiB + RS buffer 47.62 MiB" in out


def test_llamacpp_state_sits_with_the_mamba_layers_only():
    # a two-GPU layer split of the 52 layers (26 each): layers 0-25 hold 12 Mamba-2 layers, 26-51 the other 11; an MoE
    # layer has no recurrent-state buffer ("RS buffer size" follows the Mamba layers)
    from gpu_garden.memory.llm.runtimes import llamacpp as LC
    s = llm.describe(model=NANO)
    kvd = C.kv_cache(s, 4096, 1, "f16", "llama.cpp")
    devs = LC.devices(s, kvd, {"blocks": 52.0, "output": 0}, 52, [1, 1])
    per_layer = (CONV_VALUES + SSM_VALUES) * 4
    assert [d["layers"] for d in devs] == [26, 26]
    assert [d["state"] for d in devs] == [12 * per_layer, 11 * per_layer]


def test_a_nemotron_h_gguf_keeps_state_on_mamba_layers_only():
    # a nemotron_h_moe GGUF's per-layer arrays (llama.cpp: recurrent iff head_count_kv and feed_forward_length are
    # both 0): the Nano pattern as 0 / 2 KV heads and 0 / 1856 feed-forward widths
    from gpu_garden.memory.llm.gguf import from_gguf_metadata
    pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
    a = "nemotron_h_moe"
    meta = {"general.architecture": a, f"{a}.block_count": 52, f"{a}.embedding_length": 2688,
            f"{a}.attention.head_count": 32, f"{a}.attention.key_length": 128, f"{a}.attention.value_length": 128,
            f"{a}.attention.head_count_kv": [2 if c == "*" else 0 for c in pattern],
            f"{a}.feed_forward_length": [1856 if c == "E" else 0 for c in pattern],
            f"{a}.ssm.state_size": 128, f"{a}.ssm.inner_size": 4096, f"{a}.ssm.group_count": 8,
            f"{a}.ssm.conv_kernel": 4, "tokenizer.ggml.tokens": ["a"] * 100}
    s = from_gguf_metadata(meta, {"blk.0.x.weight": (100, "F16", 50)}, name="nano.gguf")
    assert s.summary()["layer_kinds"] == {"full": 6, "mamba": 23, "ffn": 23}
    assert s.recurrent_state_per_seq == 23 * (CONV_VALUES + SSM_VALUES) * 4
