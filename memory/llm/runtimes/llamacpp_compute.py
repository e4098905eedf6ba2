"""llama.cpp's compute buffer for a full offload (the reserve's peak, per GPU): the logits, the gated feed-forward's live
set with flash attention, the scores without it (moved from llamacpp.py, kv48: its 600-line guard); llamacpp.py's
evaluate calls compute_buffer and re-exports what tests and ollama.py read there."""
from .llamacpp_mask import MASK_F32_BYTES, MASK_FLASH_BYTES
from .llamacpp_noflash import no_flash_token_values


# The gated feed-forward's live set (kv-accuracy round 59). llama-graph.cpp's build_ffn and build_moe_ffn join gate
# and up with ggml_swiglu_split / ggml_geglu_split, a GGML_OP_GLU node, and ggml-alloc.c's ggml_op_can_inplace does
# not list GGML_OP_GLU: its output is a new tensor allocated while both inputs are still live (a parent is freed only
# after its last consumer is allocated), so gate, up and the product, 3 x n_ff rows of f32 per token, are live at once
# beside the residual stream (n_embd), which the layer's closing add still reads. A MoE layer's routed experts hold
# n_ff_exp x n_expert_used rows each; its down projection's output, [n_embd, n_expert_used, n_tokens], is allocated
# while the product is live. With flash attention the mask's f16 cast lives until the last attention layer reads it
# (round 57b), through every earlier layer's feed-forward: 2 bytes a mask element. Read in ggml-org/llama.cpp's
# source as the fork TheTom/llama-cpp-turboquant keeps it at 69d8e4be (b9079): ggml/src/ggml-alloc.c, src/llama-graph.cpp.
# A lower bound: the other tensors live there (the normed input of a shared expert, Gemma 3n's altup stack, the
# order ggml-vulkan's graph_optimize gives the nodes) are not counted. An ungated MLP (NemotronH's squared ReLU,
# LLM_FFN_RELU_SQR without a gate: ggml_relu and ggml_sqr are in-place ops) holds one n_ff row.
GLU_LIVE = 3
UNGATED_FFN_ARCHS = ("nemotron_h",)
MASK_F16_BYTES = 2
# Gemma 4's per-layer inputs (kv-accuracy round 83, batch 86): project_per_layer_inputs ends in a ggml_cont of the
# [n_embd_per_layer, n_tokens, n_layer] f32 tensor, and every layer reads its slice through a view
# (ggml_view_2d_slice); ggml-alloc frees a view's source only when its last view's consumers are done (n_views), so
# the whole tensor is live through every full-ubatch layer's feed-forward (src/models/gemma4-iswa.cpp, ggml-alloc.c
# at TheTom/llama-cpp-turboquant 69d8e4be): n_layer x hidden_size_per_layer_input f32 values a token. (trfix2, rev1 B3)
# It is built before layer 0, so it is live beside every layer's attention too (the scores, the mask), not only the
# feed-forward; Gemma 3n's graph builds the same tensor ([n_embd_altup, n_tokens, n_layer], gemma3n-iswa.cpp
# project_per_layer_inputs, a slice per layer; its altup stack beside it is not counted: a lower bound).
GEMMA4_GRAPH_ARCHS = ("gemma4",)
PLE_GRAPH_ARCHS = ("gemma4", "gemma3n")


def per_layer_inputs(spec) -> int:
    """f32 values per token of the per-layer inputs live through the whole graph (PLE_GRAPH_ARCHS), else 0."""
    return spec.n_layers * spec.ple_width if spec.arch.startswith(PLE_GRAPH_ARCHS) else 0


def ffn_live_values(spec) -> int:
    """f32 values per token live at a layer's gated feed-forward (GLU_LIVE): the larger of a dense MLP's and a MoE
    layer's routed experts', and the per-layer inputs (per_layer_inputs)."""
    d = spec.hidden
    live = 1 if spec.arch.startswith(UNGATED_FFN_ARCHS) else GLU_LIVE
    # a MoE model's intermediate_size counts only where a layer is dense (DeepSeek's first blocks; Qwen's MoE configs
    # name one no layer uses, and a config without it gets 4 x hidden)
    has_dense = not spec.n_experts or not all(spec.moe_layers or (True,))
    # the widest layer's MLP (Gemma 4 E2B's double-wide shared layers: llama-model.cpp creates ffn_gate/up/down
    # with hparams.n_ff(i), the GGUF's feed_forward_length array)
    dense = live * max(spec.intermediate, spec.ffn_widest) + d if spec.intermediate and has_dense else 0
    moe = 0
    if spec.n_experts and spec.moe_intermediate:
        routed = spec.moe_intermediate * max(spec.n_experts_per_tok, 1)
        # gemma4-iswa.cpp builds a MoE layer's shared MLP first (cur_mlp, then ggml_add(cur_mlp, cur_moe)): its
        # output, n_embd a token, is live through the routed branch
        moe = max(live * routed + d, routed + d * max(spec.n_experts_per_tok, 1) + d) + (
            d if spec.arch.startswith(GEMMA4_GRAPH_ARCHS) else 0)
    return max(dense, moe) + per_layer_inputs(spec)


# The graph a compute buffer is sized for (rev20 D4: one choice, where glu= and graph= could ask for a mix no runtime
# runs), by what was read of it:
#   "llama.cpp"      mainline's graph: with flash attention the gated feed-forward's live set (round 59), without it
#                    the term no_flash_token_values reads for Qwen3.5's gated attention (round 105)
#   "ik_llama.cpp"   the same feed-forward live set; without flash attention the old term, its qwen35 graph not being
#                    mainline's (rev19 S1)
#   "ollama-engine"  Ollama's own engine, whose graph was not read: the feed-forward term from before round 59 (4 x n_embd
#                    + the widest MLP a token) and the old no-flash term
GRAPHS = ("llama.cpp", "ik_llama.cpp", "ollama-engine")


def compute_buffer(spec, cells: int, ubatch: int, flash: bool, logits: bool = True, outputs: int | None = None,
                   out_copy: int = 0, mask: int = 0, under: bool = False, cpu_attn: int = 0,
                   graph: str = "llama.cpp") -> int:
    """ggml compute buffer for a full offload: the larger of the attention scores (absent with flash attention)
    and the output logits, 4 bytes each (Ollama's GraphSize for llama-family graphs); with flash attention, also the
    gated feed-forward's live set (ffn_live_values) beside the mask's f16 cast. logits=False: a GPU of a
    layer split that does not hold the output layer (each device has its own buffer for its part of the graph).
    outputs: the rows of logits the graph is reserved for (OUTPUTS_MAX), a whole ubatch when None.
    out_copy: the bytes of a host-side output matrix the GPU copies in to run the output matmul (op offload).
    mask: the attention masks' elements (mask_elements): with flash attention their f32 copy and f16 cast.
    under: the logits sit above the f32 mask copy's freed region (mask_under_logits): 4 bytes a mask element more.
    cpu_attn: with flash attention, the bytes live beside the mask's two copies where layer 0 is on the CPU
    (cpu_attention_inputs). graph: the runtime's graph (GRAPHS)."""
    if graph not in GRAPHS:
        raise ValueError(f"compute_buffer: graph must be one of {', '.join(GRAPHS)}, got {graph!r}")
    d, H, V = spec.hidden, spec.n_heads, spec.vocab
    rows = ubatch if outputs is None else min(ubatch, outputs)
    logits = (4 * (ubatch * d + rows * V) + out_copy + (MASK_F32_BYTES * mask if under and flash else 0)
              if logits else 0)
    if flash:
        ffn = (4 * ubatch * (4 * d + max(spec.intermediate, spec.moe_intermediate * max(spec.n_experts_per_tok, 1)))
               if graph == "ollama-engine" else 4 * ubatch * ffn_live_values(spec) + MASK_F16_BYTES * mask)
        return int(max(logits, ffn, MASK_FLASH_BYTES * mask + cpu_attn + 4 * ubatch * per_layer_inputs(spec)))
    per_token = no_flash_token_values(spec, mainline=graph == "llama.cpp")
    return int(max(4 * ubatch * (per_token + cells * (1 + H) + per_layer_inputs(spec)), logits))
