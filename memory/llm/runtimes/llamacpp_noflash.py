"""llama.cpp's compute buffer without flash attention: the f32 values a token that sit beside the attention scores
(n_kv x n_ubatch x n_head f32) and the f32 mask at the reserve's peak, the scores' allocation."""
from ..gguf import gguf_arch


# Every architecture but the ones below keeps the term the estimate has had since it was written (Ollama's GraphSize
# heuristic): 1 + 4 x n_embd a token.
#
# Qwen3.5 / Qwen3.6's gated attention (llama.cpp's qwen35 and qwen35moe; kv-accuracy round 105). Read at
# TheTom/llama-cpp-turboquant 69d8e4be: src/models/qwen35moe.cpp (and qwen35.cpp) build_layer_attn projects Q and its
# output gate together (Qcur_full, 2 x n_head x head_dim a token, line 129) and takes both Q (line 132) and the gate
# (line 152) as views of it; the gate's ggml_cont_2d is consumed only after build_attn (ggml_sigmoid, line 186), so
# ggml-alloc.c (ggml_gallocr_alloc_graph_impl: a view's source is freed once its last view's consumers have run,
# n_views) keeps Qcur_full live through the attention. Q after its norm and RoPE (n_head x head_dim; rms_norm writes a
# new tensor, the norm weight's mul and the rope reuse it) is still live when the scores (kq, src/llama-graph.cpp
# build_attn_mha line 2016) are allocated. Without flash attention the V cache is transposed, so the cache write's
# index input v_idxs holds one int64 per V element (n_kv_heads x head_dim a token, 2 f32 slots each), beside k_idxs
# (one int64), the M-RoPE positions (4 int32) and the output ids (one int32), all graph inputs live to the last
# layer. Below Q and Qcur_full the residual stream's n_embd-sized tensors take two blocks (qwen35: the layer input
# and the attention norm's output, freed by then and too small for Qcur_full) or three (qwen35moe: the routed experts'
# sum, allocated while the weighted experts are live, leaves a third), which ggml_dyn_tallocr's best fit does not
# reuse for the larger tensors above them. This layout is the allocator's own: a CPU build of 69d8e4be compiled with GGML_ALLOCATOR_DEBUG, on GGUF
# files with Qwen3.5-9B's and Qwen3.5-122B-A10B's shapes, prints at the kq allocation exactly these tensors
# (ffn_out-2 / node_284 the layer input, Qcur_full-3, norm-3, kq-3, attn_inp_kq_mask and the inputs) and the holes,
# and the CPU buffer less its inp_embd (on a GPU run the token table's output stays in host memory) is the printed
# CUDA figure: 2220.01 MiB for the 9B at 65536 cells, -ub 512; 3481.80 for the 122B at 16384, -ub 1586.
# Over several cards each card's split holds its own copies of the inputs: a card without the last layer has no output
# ids (one int32 a token less: 3481.80 on CUDA1, 3481.81 on CUDA3), and one of the four P100 cards prints one n_embd
# block less (CUDA2, 3463.22), a layout of that card's split not modelled. Not read: -ot sending the attention weights
# to the CPU (their matmuls offloaded to the GPU with the weights copied in: 5125 values a token fewer on CUDA1-3 at
# 32768 cells, -ub 1585, than this term).
# (rev19 S1) ik_llama.cpp keeps the old term, as Ollama's own engine does (llamacpp_compute.GRAPHS): its qwen35
# graph (src/graphs/build_qwen35.cpp at ikawrakow/ik_llama.cpp 8337e4cd) calls build_std_attention, and its src/ has no
# k_idxs / v_idxs inputs (the cache is written by ggml_cpy, not ggml_set_rows), so the live set above was not read there.
# (rev19 B1, rev20 S1) The family by its GGUF names (general.architecture): gguf_arch turns a Hugging Face model_type
# (qwen3_5, qwen3_5_moe and their _text configs) into them, and a GGUF's spec carries them already.
GATED_ATTN_ARCHS = ("qwen35", "qwen35moe")
MROPE_POSITIONS = 4


def no_flash_token_values(spec, mainline: bool = True) -> int:
    """f32 values a token beside the scores and the mask at the no-flash-attention peak of llama.cpp's reserve.
    mainline=False: the old term for every architecture (compute_buffer's graph "ik_llama.cpp" or "ollama-engine",
    whose graphs were not read for it)."""
    d = spec.hidden
    if not mainline or gguf_arch(spec) not in GATED_ATTN_ARCHS:
        return 1 + 4 * d
    q = spec.n_heads * spec.head_dim_k
    residual = (3 if spec.n_experts else 2) * d
    inputs = 2 * spec.n_kv_heads * spec.head_dim_v + 2 + MROPE_POSITIONS + 1
    return residual + 2 * q + q + inputs
