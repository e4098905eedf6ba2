"""llama.cpp's IQ3_XS file type by tensor role (src/llama-quant.cpp): the default type is IQ3_S; the output, and a
tied token embedding quantized as the output, is Q6_K; the blocks mix IQ3_XXS and IQ3_S. Checked against
ggml-org/llama.cpp#18270 (MedGemma-27B-it IQ3_XS, all 63 layers offloaded): 'CPU_Mapped model buffer 1102.77 MiB'
(the token embedding, Q6_K) and 'CUDA0 model buffer 11020.38 MiB' (the blocks and the tied output's GPU copy)."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.weights import BLOCK_BITS

MiB = 1 << 20


def _plan():
    s = llm.describe(model="google/medgemma-27b-it")
    return llm.plan(s, "llama.cpp", ctx=35328, parallel=4, kv_unified=True, weights_dtype="IQ3_XS")


def test_tied_embedding_on_the_host_is_q6_k_as_printed():
    # the token table at the file's IQ3_S would be 577 MiB
    assert _plan()["host_weights"] / MiB == pytest.approx(1102.77, rel=0.001)


def test_gpu_model_buffer_as_printed():
    # the whole-file 3.50 bits for every weight gives 11269 MiB (+2.3 %)
    assert _plan()["gpu_weights"] / MiB == pytest.approx(11020.38, rel=0.012)


def test_block_rate_matches_the_source_mix_for_llama3_8b():
    # Llama-3-8B by llama_tensor_get_type: attn_q/k IQ3_XXS (3.0625), attn_v Q4_K (n_gqa 4), attn_output and ffn_down
    # IQ3_S (3.4375), ffn_gate/up IQ3_XXS on layers 4-27 and IQ3_S on the first and last four: 3.270 bits
    d, kv, ff, n = 4096, 1024, 14336, 32
    q, k, v, o, gu, down = d * d, d * kv, d * kv, d * d, 2 * d * ff, d * ff
    mid = (q + k) * 3.0625 + v * 4.5 + o * 3.4375 + gu * 3.0625 + down * 3.4375
    edge = mid + gu * (3.4375 - 3.0625)
    bits = (24 * mid + 8 * edge) / (n * (q + k + v + o + gu + down))
    assert BLOCK_BITS["IQ3_XS"] == pytest.approx(bits, abs=0.01)
