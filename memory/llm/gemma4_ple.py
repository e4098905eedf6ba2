"""Gemma 4's per-layer-embedding models (E2B, E4B): a second token table of vocab_size_per_layer_input x (layers x
hidden_size_per_layer_input) feeding every decoder layer, and the last num_kv_shared_layers layers reading the K and V
of the last earlier layer of their kind (transformers 5.24.0 Gemma4TextConfig.kv_sharing_modes): those layers have no
k_proj / v_proj and no cache. Where each runtime keeps the table:
  llama.cpp  per_layer_token_embd is an input tensor (llama-arch.cpp LLM_TENSOR_LAYER_INPUT, GGML_OP_GET_ROWS), kept
             on the host like token_embd; the KV cache holds the layers with has_kv(il) only (gemma4-iswa.cpp)
  Ollama     per_layer_token_embd, per_layer_model_proj and per_layer_proj_norm go with the output layer
             (ml/backend/ggml/ggml.go, v0.21.0-v0.23.1), placed on the GPU only when that layer fits (from 0.30
             llama-server runs the model: as llama.cpp); the shared
             layers read the donor's cache (model/models/gemma4/model_text.go kvDonorMap), which alone is allocated
  vLLM       every weight on the GPU; a layer with a kv_sharing_target_layer_name gets no KVCacheSpec
             (v1/worker/gpu_model_runner.py get_kv_cache_spec), as if it did not exist. Its own layout holds more than
             the checkpoint (models/gemma4.py, gemma4_mm.py and layers/rotary_embedding/gemma4_rope.py, identical in
             the 0.19.0 and 0.22.0 wheels): Gemma4Attention builds one QKVParallelLinear with a K and a V slot in every
             layer, a KV-shared one too (its K and V are computed and dropped) and an attention_k_eq_v global layer's
             V slot as well ("K weights are loaded into both K and V slots"): vllm_shared_kv_slots;
             Gemma4ForConditionalGeneration allocates per_layer_embeddings, max_num_batched_tokens x layers x
             hidden_size_per_layer_input in the model's dtype, inside its language model (loaded with
             --language-model-only too): plan_weights.vllm_load_extras; Gemma4RotaryEmbedding (proportional rope)
             passes rotary_dim = head_size, so its cos/sin table is global_head_dim wide whatever
             partial_rotary_factor says: context_len._rope_cache_elems"""
from ..errors import UserError
from .spec import FULL, SHARED, LLMSpec, _int

# transformers Gemma4TextConfig default for vocab_size_per_layer_input
PLE_VOCAB = 262_144


def share_kv(cfg: dict, spec: LLMSpec) -> None:
    """Mark the KV-shared layers (no cache, no K/V projections) and size the per-layer table."""
    L = spec.n_layers
    n = _int(cfg, "num_kv_shared_layers", default=0) or 0
    ple = _int(cfg, "hidden_size_per_layer_input", default=0) or 0
    if not 0 <= n < L or not 0 <= ple <= 65536:
        raise UserError(f"config num_kv_shared_layers = {n} / hidden_size_per_layer_input = {ple} is not plausible for "
                        f"{L} layers (0 <= shared < layers)")
    mark_shared(spec, n, "config num_kv_shared_layers")
    if n and cfg.get("use_double_wide_mlp"):  # the shared layers' MLP is twice as wide (mlp_width)
        spec.ffn_widest = 2 * spec.intermediate
    if ple:  # the table, per_layer_model_projection (hidden -> layers x width) and per_layer_projection_norm
        v = _int(cfg, "vocab_size_per_layer_input", default=PLE_VOCAB) or PLE_VOCAB
        spec.ple_params = v * L * ple + spec.hidden * L * ple + ple
        spec.ple_width = ple
        towers = [t for t, known in (("audio", isinstance(cfg.get("audio_config"), dict)), ("vision", cfg.get("_vision")))
                  if not known]
        spec.notes.append(f"per-layer embedding table and projection: {spec.ple_params / 1e9:.2f} B parameters (llama.cpp "
                          "keeps it on the host, Ollama before 0.30 with the output layer, vLLM on the GPU)"
                          + (f"; the {' and the '.join(towers)} tower{'s' if len(towers) > 1 else ''} of the checkpoint "
                             f"{'are' if len(towers) > 1 else 'is'} not described, not counted" if towers else ""))


def mark_shared(spec: LLMSpec, n: int, key: str) -> None:
    """The last n layers read the K and V of the last earlier layer of their kind: kind SHARED, no cache (llama.cpp
    has_kv(il): il < n_layer - shared_kv_layers; transformers first_kv_shared_layer_idx)."""
    L = spec.n_layers
    if not n:
        return
    if not 0 < n < L:
        raise UserError(f"{key} = {n} is not plausible for {L} layers (0 <= shared < layers)")
    first = L - n
    if not set(spec.layer_kinds[first:]) <= set(spec.layer_kinds[:first]):
        raise UserError(f"{key}: a shared layer's kind (sliding / full) has no earlier layer of that kind to read its "
                        "cache from")
    per = spec.layer_kv_elems or [spec.kv_elems_per_token_layer()] * L
    spec.layer_kinds = spec.layer_kinds[:first] + [SHARED] * n
    spec.layer_kv_elems = list(per[:first]) + [0] * n
    spec.notes.append(f"its last {n} of {L} layers read an earlier layer's K and V ({key.split()[-1]}): only the first "
                      f"{first} keep a cache")


def shared_layer_params(spec: LLMSpec, kind: str, gh: int) -> tuple:
    """A KV-shared layer's attention (kind: the config's, sliding or full; gh: the full layers' head size): q_proj
    and o_proj, and q_norm (Gemma4TextAttention builds no k_proj, v_proj, k_norm for it)."""
    hd = gh if kind == FULL else spec.head_dim_k
    return 2 * spec.hidden * spec.n_heads * hd, hd


def vllm_shared_kv_slots(spec: LLMSpec, kind: str, gh: int, gkv: int) -> int:
    """The K and V weights vLLM's Gemma4Attention allocates in a KV-shared layer (kind: the config's, sliding or
    full; gh / gkv: the full layers' head size and KV heads), which the checkpoint does not hold: its qkv_proj is
    built with the layer's KV heads like any other layer's."""
    return 2 * spec.hidden * (gkv * gh if kind == FULL else spec.n_kv_heads * spec.head_dim_k)


def mlp_width(cfg: dict, spec: LLMSpec, i: int) -> int:
    """use_double_wide_mlp doubles intermediate_size on the KV-shared layers (Gemma4TextMLP)."""
    return spec.intermediate * (2 if cfg.get("use_double_wide_mlp") and spec.layer_kinds[i] == SHARED else 1)


def place(spec: LLMSpec, roles: dict, runtime: str, version=None) -> dict:
    """weights_by_role counts the per-layer table (its 'per_layer') with the token embedding, where llama.cpp keeps
    it (the host); Ollama's own backend loads it with the output layer; Ollama from 0.30 starts llama-server
    (runtimes/ollama.py llama_server), which keeps it on the host as llama.cpp does."""
    from .runtimes.ollama import llama_server
    ple = roles.get("per_layer", 0)
    if not ple or runtime != "ollama" or llama_server(version):
        return roles
    return dict(roles, embedding=roles["embedding"] - ple, output=roles["output"] + ple)


# Gemma 4's audio tower (E2B / E4B audio_config, model_type gemma4_audio): a USM Conformer, as SGLang's
# python/sglang/srt/models/gemma4_audio.py builds it over the checkpoint's tensors (vLLM's gemma4_mm.py loads
# transformers' own with AutoModel.from_config, the same tensors): a subsampling projection of two 3 x 3 stride-2
# convolutions (1 -> c0 -> c1 channels over SSCP_MEL_BINS mel bins, each with a LayerNorm) and input_proj_linear
# (c1 x the 32 bins left -> hidden); num_hidden_layers conformer blocks, each two macaron feed-forwards (norm, hidden ->
# 4 hidden -> hidden, norm), attention (norm, fused q k v, the relative position embedding's pos_proj, per_dim_scale of
# a head, post, post_norm) and a light convolution (norm, GLU linear_start hidden -> 2 hidden, depthwise conv of
# conv_kernel_size, conv_norm, linear_end) and a closing norm; output_proj (hidden -> output_proj_dims, biased); and
# gemma4_mm.py's embed_audio, one bias-free output_proj_dims x text hidden projection. The clippable linears' four
# clamp scalars are not counted.
SSCP_MEL_BINS = 128


def audio_tower_params(audio: dict, text_hidden: int) -> int:
    """Parameters of Gemma 4's audio tower and its embed_audio projection (E2B's: 12 x 1024 -> 307.2 M)."""
    d, n = int(audio.get("hidden_size") or 1024), int(audio.get("num_hidden_layers") or 12)
    head = d // int(audio.get("num_attention_heads") or 8)
    kernel = int(audio.get("conv_kernel_size") or 5)
    c0, c1 = (list(audio.get("subsampling_conv_channels") or (128, 32)) + [32])[:2]
    bins = SSCP_MEL_BINS
    for _ in range(2):
        bins = (bins + 2 - 3) // 2 + 1
    out = int(audio.get("output_proj_dims") or d)
    block = 2 * (8 * d * d + 2 * d) + (5 * d * d + 2 * d + head) + (3 * d * d + 2 * d + d * kernel) + d
    sscp = 9 * c0 + c0 + 9 * c0 * c1 + c1 + c1 * bins * d
    return n * block + sscp + d * out + out + out * text_hidden
