"""llama.cpp's K-quant fallback for ffn_down rows that are not a multiple of 256 values, for every file type in
memory/llm/weights.K_FALLBACK_EXTRA. test_llm_batch6.py pins Q4_K_S on a printed Ollama figure; the other types had
no test, so doubling their entry passed. Here the extra bits per ffn_down weight are worked out by hand from
ggml's block sizes (bits per weight of one block: Q4_K 4.5, Q5_K 5.5, Q6_K 6.5625, Q5_0 5.5, Q5_1 6.0, Q8_0 8.5)
and llama.cpp's fallback map (llama-quant.cpp: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0); the _M mixes keep
ffn_down in Q6_K on half of the layers (use_more_bits), Q4_K_S in Q5_K on the first eighth."""
import pytest

from gpu_garden.memory.llm import kv as llm, weights as W

# Qwen2.5-72B: 80 layers, hidden 8192, intermediate 29568 (29568 % 256 == 128)
FFN_DOWN = 80 * 29568 * 8192
HAND_BITS = {
    "Q6_K": 8.5 - 6.5625,                                  # every ffn_down: Q6_K -> Q8_0
    "Q5_K_S": 6.0 - 5.5,                                   # Q5_K -> Q5_1
    "Q5_K_M": 0.5 * (8.5 - 6.5625) + 0.5 * (6.0 - 5.5),    # half Q6_K -> Q8_0, half Q5_K -> Q5_1
    "Q4_K_M": 0.5 * (8.5 - 6.5625) + 0.5 * (5.5 - 4.5),    # half Q6_K -> Q8_0, half Q4_K -> Q5_0
    "Q4_K_S": 1 / 8 * (6.0 - 5.5) + 7 / 8 * (5.5 - 4.5),   # first eighth Q5_K -> Q5_1, the rest Q4_K -> Q5_0
}


def _blocks(spec, t):
    return W.weights_by_role(spec, t)["blocks"]


@pytest.mark.parametrize("t", sorted(HAND_BITS))
def test_fallback_adds_the_hand_derived_bytes(t, monkeypatch):
    s = llm.describe(model="Qwen2.5-72B")
    assert (s.n_layers, s.hidden, s.intermediate) == (80, 8192, 29568)
    with_fallback = _blocks(s, t)
    monkeypatch.setattr(W, "K_FALLBACK_EXTRA", {})
    without = _blocks(s, t)
    assert with_fallback - without == pytest.approx(FFN_DOWN * HAND_BITS[t] / 8, rel=1e-6)
    assert "not a multiple of 256" not in W.weights_by_role(s, t)["how"]


def test_every_fallback_type_is_covered_here():
    assert set(W.K_FALLBACK_EXTRA) == set(HAND_BITS)


@pytest.mark.parametrize("t", sorted(HAND_BITS))
def test_rows_that_divide_256_and_moe_models_take_no_fallback(t):
    for name in ("Qwen2.5-32B", "Qwen3-30B-A3B"):     # 27648 = 108 x 256; an MoE's experts are sized elsewhere
        s = llm.describe(model=name)
        assert W._k_fallback_bits(s, t) == 0.0


def test_moe_expert_ffn_down_takes_the_fallback(monkeypatch):
    # ollama#4799 (batch 20): deepseek-v2:16b-lite-chat-q4_K_S with 26 of its 27 blocks on the GPU prints
    # 'CUDA0 buffer size = 8764.11 MiB' -- the 26 MoE blocks (the dense block 0 stays on the CPU). DeepSeek-V2-Lite's
    # experts have rows of 1408 values (1408 % 256 == 128): ffn_down_exps takes llama.cpp's fallback like a dense ffn_down
    s = llm.describe(model="deepseek-v2:16b-lite-chat-q4_K_S")
    assert (s.n_experts, s.moe_intermediate) == (64, 1408)

    def moe_blocks_mib():
        blocks = W.weights_by_role(s, "Q4_K_S")["blocks"]
        return blocks * sum(s.layer_params[1:]) / sum(s.layer_params) / 2**20

    assert moe_blocks_mib() == pytest.approx(8764.11, rel=0.005)
    assert "rows of 1408" in W.weights_by_role(s, "Q4_K_S")["how"]
    monkeypatch.setattr(W, "K_FALLBACK_EXTRA", {})
    assert moe_blocks_mib() < 8764.11 * 0.95                    # without it: 6 % short


# Every tensor's rows are checked, not ffn_down's alone (llama-quant.cpp, tensor->ne[0] % QK_K): Qwen2.5-0.5B's hidden
# 896 (= its 14 heads x 64) is not a multiple of 256, so attn_q/k/v/output and ffn_gate/up (Q4_K -> Q5_0; attn_v's
# Q6_K half -> Q8_0) and the tied token table (the output's Q6_K -> Q8_0) take the fallback; ffn_down's 4864 does not.
BASE_BITS = {"Q4_K_M": 5.5 - 4.5, "Q4_K_S": 5.5 - 4.5, "Q5_K_M": 6.0 - 5.5, "Q5_K_S": 6.0 - 5.5, "Q6_K": 8.5 - 6.5625}


@pytest.mark.parametrize("t", sorted(HAND_BITS))
def test_rows_of_hidden_values_take_the_fallback(t):
    s = llm.describe(model="Qwen2.5-0.5B")
    assert (s.n_layers, s.hidden, s.n_heads * s.head_dim_k, s.n_kv_heads * s.head_dim_k, s.intermediate) == (24, 896, 896, 128, 4864)
    q_k_o_gate_up = 24 * (896 * 896 + 896 * 128 + 896 * 896 + 2 * 896 * 4864)
    v = 24 * 896 * 128
    assert W._k_fallback_bits(s, t) == pytest.approx(q_k_o_gate_up * BASE_BITS[t] + v * HAND_BITS[t], rel=1e-9)


def test_every_base_fallback_type_is_covered_here():
    assert set(W.K_FALLBACK_BASE_EXTRA) == set(BASE_BITS)


def test_qwen25_05b_library_build_as_ollama_prints_it():
    # ollama#9031 (0.5.8, qwen2.5:0.5b, --parallel 4 at 2048): 'weights.total 331.8 MiB (repeating 193.8,
    # nonrepeating 137.9)', kv 96.0 MiB; 0.5.8's total is the blocks plus their KV share, nonrepeating the output tensor
    # (here the tied token table, 151936 x 896 in Q8_0). Without the fallback: 301.0 MiB and a 106.5 MiB Q6_K table.
    s = llm.describe(model="qwen2.5:0.5b")
    r = llm.plan(s, "ollama", ctx=2048, parallel=4, vram=139.2 * 2**30, runtime_version="0.5.8")
    assert r["weights_by_role"]["output"] / 2**20 == pytest.approx(137.9, abs=0.05)
    assert r["ollama_weights_total"] / 2**20 == pytest.approx(331.8, rel=0.005)
    assert W.role_type("Q4_K", 896) == "Q5_0" and W.role_type("Q4_K", 1024) == "Q4_K"
