"""What an LLM is, for memory purposes: layer kinds, attention geometry, parameter count and (when a
file is given) the exact weight bytes. Built from a Hugging Face config.json, GGUF metadata or
safetensors headers (files.py, gguf.py), or a built-in name (names.py); the memory math lives in kv.py and
the modules it names."""
import re
from dataclasses import dataclass, field, replace

from ..errors import UserError
from .names import MODELS_DIR  # noqa: F401  (spec.MODELS_DIR, kept for callers)
# a quantization_config's readers (quant_config.py); runtimes/vllm_drafter imports them from here
from .quant_config import _fp8_channel, _quant_bits, _quant_group, _quant_name, _quant_skip, _quant_sym

FULL, SLIDING, LINEAR, MAMBA = "full", "sliding", "linear", "mamba"
FFN = "ffn"  # a layer that is an MLP or MoE block alone (Nemotron-H's '-' and 'E'): no cache, no state
SHARED = "shared"  # an attention layer reading an earlier layer's K and V (Gemma 4 num_kv_shared_layers): no cache

_MAX_LAYERS = 1024
_MAX_DIM = 1 << 20
_MAX_VOCAB = 1 << 22


@dataclass
class LLMSpec:
    name: str
    arch: str
    layer_kinds: list              # one entry per decoder layer: full | sliding | linear | mamba | ffn
    hidden: int
    n_heads: int
    n_kv_heads: int
    head_dim_k: int
    head_dim_v: int
    vocab: int
    intermediate: int = 0
    max_ctx: int | None = None
    sliding_window: int | None = None
    kv_lora_rank: int = 0          # MLA (DeepSeek): the cache holds kv_lora_rank + qk_rope_head_dim per token
    qk_rope_head_dim: int = 0
    n_experts: int = 0
    n_experts_per_tok: int = 0
    moe_intermediate: int = 0
    params: int | None = None      # total parameters (all experts)
    linear_params: int | None = None  # parameters in decoder-block matmuls (what AWQ/GPTQ/fp8 quantize)
    expert_params: int = 0          # routed MoE expert matmuls alone (what an MXFP4 checkpoint quantizes)
    weights_bytes: int | None = None  # exact, from a file
    weights_source: str = ""
    gguf_sized: bool = False       # weights_bytes is a GGUF file's own tensor table (gguf.py): no size to give beside it
    embed_bytes: int | None = None    # token embedding (llama.cpp keeps it in host RAM)
    output_bytes: int | None = None   # lm_head / output.weight
    tied: bool = False                # output head shares the embedding (llama.cpp still puts a copy on the GPU)
    dtype: str = "bf16"            # weight dtype the file or config names
    quant: str | None = None       # awq | gptq | fp8 | int8 | a GGUF type name
    checkpoint_quant: str | None = None  # the checkpoint's own method (quantization_config), kept when a GGUF name sets quant
    quant_group: int | None = None  # values per scale of a 4-bit group quantization (config's group_size; None: 128)
    quant_sym: bool | None = None   # symmetric int4 (no zero point), as the quantization_config states it; None: not stated
    quant_bits: int | None = None   # GPTQ/AWQ width but 4 (2 or 3: the config's bits or the name's; GPTQ's 8); None: 4
    quant_skip: tuple = ()          # modules the checkpoint leaves in 16 bits (llm_int8_skip_modules / modules_to_not_convert)
    fp8_channel: bool = False       # FP8 weights scaled per output row (compressed-tensors "channel", an -FP8-dynamic name)
    fp8_ct: bool = False            # FP8 weights in a compressed-tensors checkpoint (llm-compressor's; vllm_rocm_fp8.py)
    fp8_block: bool | None = None   # FP8 weights block-scaled (quantization_config weight_block_size); None: no config read
    recurrent_state_per_seq: int = 0  # bytes of fixed recurrent state per sequence (mamba / linear-attention layers)
    layer_kv_elems: list | None = None  # per-layer K+V elements per token when layers differ (GGUF per-layer heads)
    mla_qk_nope: int = 0           # MLA per-head dims: builds that stored full K/V keep heads x (nope + rope) + heads x v
    mla_v_head: int = 0
    mla_q_lora: int = 0            # MLA query down-projection rank (q_lora_rank; 0: queries straight from the hidden state)
    index_head_dim: int = 0        # DeepSeek sparse attention (DSA): the Lightning Indexer's key width (0: no indexer)
    index_n_heads: int = 0         # its query heads (weights only: the key cache holds one head)
    indexer_layers: tuple = ()     # the layers that keep an indexer key cache, where not all do (config indexer_types
    #                                "full"; GLM-5.2's others reuse the last full layer's top-k); (): every layer
    gguf_nextn_blocks: int = 0     # nextn (MTP) blocks a GGUF keeps after the layers that llama.cpp places as blocks but
    #                                does not load (GGUF_NEXTN_PLACED: glm-dsa's TENSOR_SKIP), no cache in them
    layer_params: list | None = None  # parameters of each decoder block (differ for MoE models with dense first blocks)
    nas_blocks: list | None = None  # Llama-Nemotron NAS: each layer's (attention, KV heads, ffn, width), read once
    laguna_layers: list | None = None  # poolside Laguna: each layer's (query heads, is_moe), read once
    dsv4: dict | None = None       # DeepSeek-V4: each layer's compress ratio, the MTP layers', the indexer width (deepseek_v4.py)
    moe_layers: tuple = ()         # per decoder layer: does its MLP hold the routed experts (a dense block's does not)
    shared_intermediate: int = 0   # a MoE layer's shared expert(s) as one MLP of this width (n_shared x moe width, ...)
    vision: dict | None = None     # vision tower geometry (config's vision_config), for the projector Ollama loads
    mm_prefix_lm: bool = False     # text_config use_bidirectional_attention "vision" (Gemma 4 26B-A4B / 31B, not E2B / E4B)
    audio: dict | None = None      # Gemma 4's audio tower (config audio_config, model_type gemma4_audio): vLLM loads it
    ollama: bool = False           # named by an Ollama library tag
    unsloth: bool = False          # the name given says unsloth (its repo): a bare _XL file type is Unsloth's (unsloth.py)
    gguf_tag: str | None = None    # the quantization a GGUF repo name's tag gives (gguf_repo.py): --weights-dtype may not contradict it
    notes: list = field(default_factory=list)
    cross_attn_layers: tuple = ()  # decoder layers that attend to image features (mllama's cross_attention_layers)
    rope_cache_elems: int = 0      # cos/sin table values of its rotary embeddings (positions x rotary dim, summed)
    rope_mrope: bool = False       # its rope has an mrope_section (Qwen-VL, Qwen 3.5+): vLLM tabulates 4 x the positions
    vllm_max_len: int | None = None  # the longest --max-model-len vLLM starts with (vllm_max_len(); None: max_ctx)
    sglang_max_len: int | None = None  # SGLang's context length without --context-length (sglang_max_len(); None: max_ctx)
    no_v_proj_layers: tuple = ()    # layers whose values come from the key projection (Gemma 4 attention_k_eq_v)
    layer_kv_heads: list | None = None  # per-layer KV heads when layers differ (Gemma 4's global layers): TP shards each
    linear_dims: tuple | None = None  # gated-DeltaNet projections: (key heads, key dim, value heads, value dim, conv kernel)
    linear_state: tuple | None = None  # gated-DeltaNet layer state for vLLM: (conv values, conv bytes each, ssm values,
    #                                    ssm bytes each), one layer, one sequence, before tensor parallelism
    mamba_chunk: int = 0            # a Mamba-2 mixer's chunk (config mamba_chunk_size, else chunk_size; 0: not given)
    mamba_cache_all: bool = False   # vLLM pages its state per block of tokens (mamba_cache_mode "all": vllm_hybrid.py)
    generic: bool = False           # a config.json whose model_type kv has no layer rules for (GENERIC_NOTE)
    gguf_mtp_blocks: int = 0        # multi-token-prediction blocks a GGUF keeps as trailing blocks (GGUF_MTP_ARCHS)
    mtp_block_params: int = 0       # parameters of one such block, its copies of the token table and head included
    mtp_layers: int = 0             # decoder layers of a multi-token-prediction drafter module (mtp_num_hidden_layers)
    mtp_params: int = 0             # that module's parameters (its layers, fc and norms; token table and head shared)
    mtp_linear: int = 0             # of them, its decoder layers' matmul weights (a checkpoint's quantization may take them)
    mtp_quant: bool | None = None   # AutoRound: does its block_name_to_quantize name the MTP module (None: not stated)
    ple_params: int = 0             # Gemma 4 per-layer embedding table (vocab_size_per_layer_input x layers x width)
    ple_bytes: int | None = None    # its bytes where a GGUF's tensor table gives them (per_layer_* tensors)
    ple_width: int = 0              # its hidden_size_per_layer_input (vLLM's per_layer_embeddings buffer)
    ffn_widest: int = 0             # the widest layer's MLP where layers differ (E2B's use_double_wide_mlp shared layers)
    vllm_qkv_slots: int = 0         # K / V weights vLLM's Gemma4Attention allocates that the checkpoint lacks (gemma4_ple.py)
    expert_file_bytes: tuple = ()   # per layer: (weights, biases) bytes of its ffn_(up|down|gate)_exps tensors, from a GGUF
    attn_file_bytes: tuple = ()     # per layer: ((tensor name, bytes), ..) of its blk.N.attn_* tensors, from a GGUF

    @property
    def n_layers(self) -> int:
        return len(self.layer_kinds)

    @property
    def attn_layers(self) -> int:
        return sum(k in (FULL, SLIDING) for k in self.layer_kinds)

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0

    def kv_elems_per_token_layer(self) -> int:
        """Cache elements one token adds to one attention layer (K and V together)."""
        if self.mla:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return self.n_kv_heads * (self.head_dim_k + self.head_dim_v)

    def kv_elems_by_kind(self) -> dict:
        """{layer kind: K+V elements one token adds across all layers of that kind}."""
        per = self.layer_kv_elems or [self.kv_elems_per_token_layer()] * self.n_layers
        out = {FULL: 0, SLIDING: 0}
        for kind, e in zip(self.layer_kinds, per):
            if kind in out:
                out[kind] += e
        return out

    def summary(self) -> dict:
        kinds = {k: self.layer_kinds.count(k) for k in (FULL, SLIDING, LINEAR, MAMBA, FFN, SHARED) if k in self.layer_kinds}
        out = {"name": self.name, "arch": self.arch, "layers": self.n_layers, "attention_layers": self.attn_layers,
                "layer_kinds": kinds, "hidden": self.hidden, "heads": self.n_heads, "kv_heads": self.n_kv_heads,
                "head_dim": self.head_dim_k, "mla": {"kv_lora_rank": self.kv_lora_rank, "qk_rope_head_dim": self.qk_rope_head_dim} if self.mla else None,
                "sliding_window": self.sliding_window, "experts": self.n_experts or None, "vocab": self.vocab,
                "max_ctx": self.max_ctx, "params": self.params, "dtype": self.dtype, "quant": self.quant,
                "layer_rules": "generic decoder" if self.generic else self.arch}
        if self.dsv4:  # DeepSeek-V4: every layer sliding, most also compressed: layers by compress ratio (1: none)
            ratios = self.dsv4["ratios"][:self.n_layers]
            out["compress_ratios"] = {str(r): ratios.count(r) for r in sorted(set(ratios))}
        return out


# ---------------------------------------------------------------- Hugging Face config.json

# model_type values whose layer layout kv's rules read (a built-in description or a rule names them; "_text" and
# "_thinker" variants of a composite config's decoder included). Any other model_type is sized as a generic decoder:
# every layer full attention unless the config lists layer_types, K and V from num_key_value_heads x head_dim.
KNOWN_ARCHS = frozenset((
    "llama", "llama4", "mllama", "mistral", "mistral3", "ministral3", "mixtral", "pixtral",
    "qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "qwen2_5_omni", "qwen3", "qwen3_moe", "qwen3_next", "qwen3_vl",
    "qwen3_vl_moe", "qwen3_omni_moe", "qwen3_5", "qwen3_5_moe",
    "gemma", "gemma2", "gemma3", "gemma3n", "gemma4", "phi", "phi3", "cohere", "cohere2", "starcoder2",
    "deepseek_v2", "deepseek_v3", "deepseek_v32", "glm_moe_dsa", "glm4", "glm4_moe", "glm4_moe_lite", "mistral4", "gpt_oss", "granitemoehybrid", "jamba",
    "minimax_m2", "olmo2", "nemotron_h",
    "nemotron-nas",  # Llama-Nemotron NAS (DeciLMForCausalLM): block_configs read per layer (nemotron_nas.py)
    "laguna",  # poolside's Laguna (LagunaForCausalLM): per-layer query heads, gates, sinks, MoE layers (laguna.py)
    "gemma4_unified",  # Gemma 4 12B (Gemma4UnifiedForConditionalGeneration): the gemma4 text decoder, an encoder-free front end
    "kimi_k2",  # Moonshot's Kimi K2 config: DeepseekV3ForCausalLM's layout (MLA, DeepSeek MoE) under its own model_type
    "smollm3",  # SmolLM3: a Llama decoder whose every 4th layer has no RoPE; each layer still caches K and V
    "glm",  # GLM-4-9B (GlmForCausalLM, and ChatGLM-format GLM-4 models described in its keys): every layer full attention, GQA
    # OLMo 3 (Olmo3ForCausalLM; vLLM's Olmo3Config maps it to Olmo2ForCausalLM): OLMo 2's layers, each sliding_window or
    # full attention as its config's layer_types say, every layer caching K and V
    "olmo3",
))
# GGUF converters that keep the multi-token-prediction layers as trailing blocks (llama.cpp convert_hf_to_gguf Glm4MoeModel:
# block_count = num_hidden_layers + num_nextn_predict_layers; each such block has an MoE layer, eh_proj (2d -> d), three
# norms and its own embed_tokens and shared_head.head). DeepSeek's and GLM-4.7-Flash's (deepseek2) drop them. Ollama
# prices every block of the file: GLM-4.5-Air at Q8_0 prints 48 layers (47 blocks + output), repeating weights 108.2
# GiB and required.kv 3.6 GiB at 20000 tokens = 47 blocks (ollama/ollama#12403).
GGUF_MTP_ARCHS = frozenset(("glm4_moe",))
# DeepSeek sparse attention (DSA: DeepseekV32ForCausalLM, GLM-5's GlmMoeDsaForCausalLM): MLA plus a Lightning
# Indexer whose fp8 keys have their own cache (cache.dsa_token_bytes); read from index_head_dim / index_n_heads.
DSA_TYPES = frozenset(("deepseek_v32", "glm_moe_dsa"))
# GLM-5.2's indexer_types: "full" layers run their own Lightning Indexer and keep its key cache, "shared" ones reuse the
# last full layer's top-k and keep none. llama.cpp reads it (GGUF attention.indexer.types) into is_indexer_full, or
# for a GGUF without the key and a training context of 1M takes GLM_5_2_DEFAULT_INDEXER_TYPES (src/models/glm-dsa.cpp:
# 1, 1, then nineteen 1, 0, 0, 0: full at 0, 1, 2, 6, 10, ..., 74, "https://huggingface.co/zai-org/GLM-5.2/blob/main/
# config.json#L26"), and llama_kv_cache_dsa's indexer cache holds those layers alone (filter_lid): "creating indexer KV
# cache ... 21 layers" in dfch/biz.dfch.LlmOps's b10505 logs (batch 79)
INDEXER_KINDS = frozenset(("full", "shared"))
# a glm-dsa GGUF's nextn block: llama.cpp's load_tensors places n_layer_all (the GGUF's block_count) + 1 layers over the
# devices (act_gpu_layers = min(n_gpu_layers, n_layer_all + 1)), and glm-dsa.cpp creates the nextn layers' tensors with
# TENSOR_SKIP (not loaded); the KV caches skip them ("78 layers" of GLM-5.2's 79 blocks). -ts 54,9,8,8 puts 55/9/8/6
# cache layers on the four GPUs only so (batch 79: 46406.25 MiB on CUDA0 = 55 x 843.75 at 768000 cells)
GGUF_NEXTN_PLACED = frozenset(("glm_moe_dsa",))


# vLLM builds a layer's Indexer, and so its DeepseekV32IndexerCache, from other fields of the same config
# (vllm/model_executor/models/deepseek_v2.py DeepseekV2MLAAttention, read at 002d6073, "IndexCache config"): without
# index_topk_pattern a layer skips the top-k, and has no indexer, where max(layer_id - index_skip_topk_offset + 1, 0) %
# index_topk_freq != 0 (defaults 2 and 1: every layer keeps one); with a pattern, where it reads "S"; the MTP layers
# always keep one. GLM-5.2's config gives index_topk_freq 4 and index_skip_topk_offset 3: layers 0, 1, 2, 6, ..., 74,
# the 21 "full" layers of its indexer_types. kv keeps one list (spec.indexer_layers) and refuses a config whose two
# descriptions disagree.
INDEX_SKIP_OFFSET = 2


def _vllm_indexer_layers(cfg: dict, n_layers: int) -> tuple:
    """The layers vLLM gives an Indexer from index_topk_freq / index_skip_topk_offset / index_topk_pattern."""
    pattern = cfg.get("index_topk_pattern")
    if pattern is not None:
        return tuple(i for i in range(n_layers) if not (i < len(pattern) and str(pattern[i]) == "S"))
    freq, offset = int(cfg.get("index_topk_freq") or 1), int(cfg.get("index_skip_topk_offset", INDEX_SKIP_OFFSET))
    return tuple(i for i in range(n_layers) if max(i - offset + 1, 0) % freq == 0)


def _indexer_layers(cfg: dict, n_layers: int, name: str) -> tuple:
    """The layers that keep an indexer key cache where the config's indexer_types marks some "shared" (or, without
    it, vLLM's index_topk_freq rule leaves some without an Indexer); () for all."""
    types = cfg.get("indexer_types")
    by_freq = _vllm_indexer_layers(cfg, n_layers)
    if not types:
        return () if len(by_freq) == n_layers else by_freq
    if not isinstance(types, list) or len(types) != n_layers or not set(map(str, types)) <= INDEXER_KINDS:
        raise UserError(f"{name}: indexer_types must list 'full' or 'shared' for each of the {n_layers} layers")
    full = tuple(i for i, t in enumerate(types) if t == "full")
    if not full:
        raise UserError(f"{name}: indexer_types marks no layer 'full': no layer would select the top-k")
    if any(k in cfg for k in ("index_topk_freq", "index_skip_topk_offset", "index_topk_pattern")) and by_freq != full:
        raise UserError(f"{name}: indexer_types marks {len(full)} layers full, but index_topk_freq / "
                        f"index_skip_topk_offset / index_topk_pattern give {len(by_freq)} layers an indexer (vLLM "
                        "reads the latter, llama.cpp the former): the config is inconsistent")
    return () if len(full) == n_layers else full


# DeepSeek-V4's compressed attention: layers compressed 4x / 128x with their own block sizes, read by deepseek_v4.py
COMPRESSED_MLA_TYPES = frozenset(("deepseek_v4",))
# architectures whose cache or weights kv's rules do not read, refused from a config.json rather than sized as a generic
# decoder (names.py UNDESCRIBED refuses their names the same way): (predicate on the decoder's config, what is not
# modelled). One row a predicate (task arch25)
UNMODELLED_CONFIGS = (
    # Moonshot's Kimi-Linear (KimiLinearForCausalLM): Kimi Delta Attention layers keep a recurrent state and short
    # convolution states of their own shapes beside MLA layers; kv's linear-attention state is gated DeltaNet's
    (lambda c: str(c.get("model_type", "")).startswith("kimi_linear"),
     "model_type 'kimi_linear' (Kimi Delta Attention) is not modelled: its KDA layers' recurrent and convolution "
     "states are not gated DeltaNet's, which is the only linear-attention state kv sizes"),
    # poolside's Laguna is read since kv56 (laguna.py: per-layer query heads, gates and sinks as weights)
)
_ARCH_SUFFIX = re.compile(r"_(?:text(?:_model)?|thinker)$")
GENERIC_NOTE = ("model_type {mt!r} has no layer rules in kv: sized with a generic decoder's (every layer full attention "
                "unless the config lists layer_types, K and V from num_key_value_heads x head_dim); sliding windows, "
                "shared KV layers or other caches of this architecture are not modelled")


def known_arch(mt: str) -> bool:
    return _ARCH_SUFFIX.sub("", mt) in KNOWN_ARCHS

def _int(cfg, *keys, default=None):
    for k in keys:
        v = cfg.get(k)
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
                raise UserError(f"config field {k!r} must be a whole number, got {v!r}")
            return int(v)
    return default


def _need(cfg, name, *keys, lo=1, hi=_MAX_DIM):
    v = _int(cfg, *keys)
    if v is None:
        raise UserError(f"config has no {' / '.join(keys)} ({name}); is this an LLM config.json?")
    if not lo <= v <= hi:
        raise UserError(f"config field {keys[0]} = {v} is not a plausible {name} (expected {lo}..{hi})")
    return v


def _text_config(cfg: dict) -> dict:
    """Vision-language and wrapper configs keep the decoder in text_config / language_config / llm_config; the
    omni models (Qwen2.5-Omni, Qwen3-Omni) one level down, in thinker_config (their talker speaks, it serves no text)."""
    thinker = cfg.get("thinker_config")
    if isinstance(thinker, dict):
        cfg = dict({k: v for k, v in cfg.items() if k not in ("thinker_config", "talker_config", "code2wav_config",
                                                               "token2wav_config")}, **thinker, _omni=True)
    for key in ("text_config", "language_config", "llm_config"):
        sub = cfg.get(key)
        if isinstance(sub, dict) and ("num_hidden_layers" in sub or "hidden_size" in sub):
            merged = {k: v for k, v in cfg.items() if k not in (key, "vision_config")}
            merged.update(sub)
            merged.setdefault("_vision", cfg.get("vision_config") if isinstance(cfg.get("vision_config"), dict) else None)
            merged.setdefault("_wrapper", cfg.get("model_type"))  # the wrapper's type (mistral3, llava)
            return merged
    return dict(cfg, _vision=cfg.get("vision_config") if isinstance(cfg.get("vision_config"), dict) else None)


# Nemotron-H's hybrid_override_pattern: one character a layer, each layer one block (transformers / vLLM
# NemotronH: 'M' Mamba-2 mixer, '*' attention, '-' MLP, 'E' MoE)
NEMOTRON_H_BLOCKS = {"M": MAMBA, "*": FULL, "-": FFN, "E": FFN}


def _layer_kinds(cfg: dict, n_layers: int) -> list:
    pattern = cfg.get("hybrid_override_pattern")
    if str(cfg.get("model_type", "")).startswith("nemotron_h") or pattern is not None:
        if not isinstance(pattern, str) or len(pattern) != n_layers or set(pattern) - set(NEMOTRON_H_BLOCKS):
            raise UserError(f"config hybrid_override_pattern must be a string of {n_layers} characters from "
                            f"{''.join(NEMOTRON_H_BLOCKS)} (one a layer), got {str(pattern)[:80]!r}")
        return [NEMOTRON_H_BLOCKS[c] for c in pattern]
    lt = cfg.get("layer_types") or cfg.get("layers_block_type")
    if isinstance(lt, list) and lt:
        if len(lt) != n_layers:
            raise UserError(f"config layer_types has {len(lt)} entries for {n_layers} layers")
        out = []
        for t in lt:
            t = str(t).lower()
            if t in ("full_attention", "attention", "global", "full"):
                out.append(FULL)
            elif "sliding" in t or t in ("local", "chunked_attention"):
                out.append(SLIDING)
            elif "mamba" in t or t in ("ssm", "recurrent"):
                out.append(MAMBA)
            else:  # linear_attention (Qwen3-Next gated DeltaNet), conv, ...
                out.append(LINEAR)
        return out
    if str(cfg.get("model_type", "")).startswith("llama4") and cfg.get("attention_chunk_size"):
        # Llama 4 (transformers Llama4TextConfig): layers with rope attend within chunks of attention_chunk_size
        # (vLLM's ChunkedLocalAttentionSpec), every no_rope_layer_interval-th layer is a global NoPE layer
        nope = cfg.get("no_rope_layers") or [int((i + 1) % int(cfg.get("no_rope_layer_interval") or 4) != 0)
                                             for i in range(n_layers)]
        if len(nope) != n_layers:
            raise UserError(f"config no_rope_layers has {len(nope)} entries for {n_layers} layers")
        return [SLIDING if r else FULL for r in nope]
    if cfg.get("attn_layer_period"):  # Jamba
        period, offset = int(cfg["attn_layer_period"]), int(cfg.get("attn_layer_offset", 0))
        return [FULL if i % period == offset else MAMBA for i in range(n_layers)]
    if cfg.get("full_attention_interval"):  # Qwen3-Next style without layer_types
        iv = int(cfg["full_attention_interval"])
        return [FULL if (i + 1) % iv == 0 else LINEAR for i in range(n_layers)]
    window = cfg.get("sliding_window")
    mt = str(cfg.get("model_type", ""))
    if window and mt.startswith("gemma2"):
        return [SLIDING if i % 2 == 0 else FULL for i in range(n_layers)]
    if window and mt.startswith("gemma3"):
        pattern = int(cfg.get("sliding_window_pattern") or 6)
        return [FULL if (i + 1) % pattern == 0 else SLIDING for i in range(n_layers)]
    # Phi-3's config names a 2047 window that the reference implementation ignores: counted as full attention
    if window and cfg.get("use_sliding_window", True) and mt in ("mistral", "mixtral", "starcoder2") \
            and window < (cfg.get("max_position_embeddings") or 1 << 30):
        return [SLIDING] * n_layers
    if window and cfg.get("use_sliding_window") and mt.startswith("qwen"):
        max_window_layers = int(cfg.get("max_window_layers", n_layers))
        return [FULL if i < max_window_layers else SLIDING for i in range(n_layers)]
    return [FULL] * n_layers


def from_config(cfg: dict, name: str = "config.json") -> LLMSpec:
    if not isinstance(cfg, dict):
        raise UserError(f"{name}: not a JSON object")
    cfg = _text_config(cfg)
    mt = str(cfg.get("model_type", "unknown"))
    if mt in COMPRESSED_MLA_TYPES:  # DeepSeek-V4: its cache groups and checkpoint as vLLM reads them (deepseek_v4.py)
        from .deepseek_v4 import from_config as dsv4_spec   # it imports this module
        return dsv4_spec(cfg, name)
    if mt in DSA_TYPES and (not _int(cfg, "index_head_dim") or not _int(cfg, "index_n_heads")
                            or not _int(cfg, "kv_lora_rank")):
        raise UserError(f"{name}: model_type {mt!r} (DeepSeek sparse attention) without kv_lora_rank, index_head_dim "
                        "and index_n_heads is not modelled: the Lightning Indexer's key cache and the fp8_ds_mla "
                        "latent are sized from them")
    for unmodelled, why in UNMODELLED_CONFIGS:
        if unmodelled(cfg):
            raise UserError(f"{name}: {why}")
    if mt.startswith("qwen4_exp"):  # Qwen3.8-Flash-Next: names.py UNDESCRIBED says what is not read
        raise UserError(f"{name}: model_type {mt!r} (Qwen3.8-Flash-Next) is not modelled: its sparse-attention indexer "
                        "key cache, hyper-connections and n-gram per-layer embedding table are not read by kv")
    L = _need(cfg, "layer count", "num_hidden_layers", "n_layer", "num_layers", hi=_MAX_LAYERS)
    if mt.startswith("nemotron_h"):  # its pattern first: without it the layers would be read as a generic decoder's
        _layer_kinds(cfg, L)
    d = _need(cfg, "hidden size", "hidden_size", "n_embd", "d_model")
    H = _need(cfg, "attention head count", "num_attention_heads", "n_head", "num_heads", hi=4096)
    KV = _int(cfg, "num_key_value_heads", "n_head_kv", "num_kv_heads")
    if KV is None and cfg.get("multi_query_attention"):
        # ChatGLM's own config (chatglm2/3, glm-4-9b, CodeGeeX4; modeling_chatglm.py SelfAttention): K and V in
        # multi_query_group_num groups, each head kv_channels wide
        KV = _need(cfg, "ChatGLM K/V groups", "multi_query_group_num", hi=4096)
    if KV is None:
        KV = 1 if cfg.get("multi_query") else H
    if not 1 <= KV <= H:
        raise UserError(f"{name}: num_key_value_heads = {KV} must be between 1 and num_attention_heads ({H})")
    if H % KV:
        raise UserError(f"{name}: num_attention_heads ({H}) is not a multiple of num_key_value_heads ({KV})")
    hd = _int(cfg, "head_dim") or (_int(cfg, "kv_channels") if mt == "chatglm" else None) or d // H
    if not 1 <= hd <= 4096:
        raise UserError(f"{name}: head_dim = {hd} is not plausible")
    V = _need(cfg, "vocabulary size", "vocab_size", "padded_vocab_size", hi=_MAX_VOCAB)
    ff = _int(cfg, "intermediate_size", "ffn_hidden_size", "n_inner", default=4 * d)
    kinds = _layer_kinds(cfg, L)

    spec = LLMSpec(name=name, arch=mt, layer_kinds=kinds, hidden=d, n_heads=H, n_kv_heads=KV,
                   head_dim_k=hd, head_dim_v=hd, vocab=V, intermediate=ff,
                   max_ctx=_int(cfg, "max_position_embeddings", "n_positions", "seq_length", "max_seq_len"),
                   sliding_window=_int(cfg, "sliding_window", "attention_chunk_size") if SLIDING in kinds else None)
    _per_kind_heads(cfg, spec)
    from .nemotron_nas import apply_blocks, is_nas, read_blocks   # it imports this module
    if is_nas(cfg):  # Llama-Nemotron NAS (DeciLM): each layer's attention and FFN from its block_configs
        apply_blocks(spec, read_blocks(cfg, L, H, d, name))
    if _int(cfg, "kv_lora_rank"):
        spec.kv_lora_rank = _need(cfg, "MLA kv_lora_rank", "kv_lora_rank", hi=65536)
        spec.qk_rope_head_dim = _need(cfg, "MLA rope dim", "qk_rope_head_dim", hi=4096)
        spec.head_dim_k = spec.kv_lora_rank + spec.qk_rope_head_dim
        spec.head_dim_v = spec.kv_lora_rank
        spec.n_kv_heads = 1
        spec.mla_qk_nope = _int(cfg, "qk_nope_head_dim", default=128)
        spec.mla_v_head = _int(cfg, "v_head_dim", default=128)
        spec.mla_q_lora = _int(cfg, "q_lora_rank", default=0) or 0
    if mt in DSA_TYPES:
        spec.index_head_dim = _need(cfg, "indexer head size", "index_head_dim", hi=4096)
        spec.index_n_heads = _need(cfg, "indexer head count", "index_n_heads", hi=4096)
        spec.indexer_layers = _indexer_layers(cfg, L, name)
        if _ARCH_SUFFIX.sub("", mt) in GGUF_NEXTN_PLACED:
            spec.gguf_nextn_blocks = min(max(_int(cfg, "num_nextn_predict_layers", default=0) or 0, 0), 8)
    spec.n_experts = _int(cfg, "n_routed_experts", "num_local_experts", "num_experts", "moe_num_experts", default=0)
    if spec.n_experts:
        spec.n_experts_per_tok = _int(cfg, "num_experts_per_tok", "moe_top_k", "num_experts_per_token", "top_k_experts",
                                      default=2)
        spec.moe_intermediate = _int(cfg, "moe_intermediate_size", "expert_intermediate_size", default=ff)
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    spec.dtype = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype, dtype)
    from .laguna import apply_layers, is_laguna, read_layers   # it imports this module
    if is_laguna(cfg):  # poolside's Laguna: each layer's query heads and MLP kind (vLLM laguna.py)
        spec.laguna_layers = read_layers(cfg, L, H, KV, spec.n_experts, name)
        apply_layers(spec, cfg, spec.laguna_layers)
    q = cfg.get("quantization_config")
    if isinstance(q, dict):
        spec.quant = spec.checkpoint_quant = _quant_name(q)
        spec.quant_group = _quant_group(q)
        spec.quant_sym = _quant_sym(q)
        spec.quant_bits = _quant_bits(q)
        spec.fp8_channel = spec.quant == "fp8" and _fp8_channel(q)
        spec.fp8_ct = spec.quant == "fp8" and str(q.get("quant_method") or "").lower() == "compressed-tensors"
        spec.fp8_block = bool(q.get("weight_block_size")) if spec.quant == "fp8" else None
        spec.quant_skip = _quant_skip(q)
        blocks = q.get("block_name_to_quantize")  # AutoRound: the blocks it quantized (vLLM's INC: a prefix match)
        if spec.quant == "auto_round" and isinstance(blocks, (str, list, tuple)) and blocks:
            names = blocks.split(",") if isinstance(blocks, str) else [str(b) for b in blocks]
            spec.mtp_quant = any(re.match(r"(?:.*\.)?mtp(?:\.|$)", n.strip()) for n in names)
    spec.tied = bool(cfg.get("tie_word_embeddings", False))
    cross = cfg.get("cross_attention_layers")
    if isinstance(cross, (list, tuple)) and cross:
        if not all(isinstance(i, int) and 0 <= i < L for i in cross) or len(set(cross)) != len(cross):
            raise UserError(f"{name}: cross_attention_layers must be distinct layer indices below {L}")
        spec.cross_attn_layers = tuple(sorted(cross))
        spec.notes.append(f"{len(cross)} of its {L} layers attend to image features (cross-attention): Ollama's estimate "
                          "prices their cache for one image; the other runtimes' figures count them as self-attention "
                          "layers")
    from .context_len import _mrope, _rope_cache_elems, sglang_max_len, vllm_max_len   # they import this module
    spec.rope_cache_elems = _rope_cache_elems(cfg, spec)
    spec.rope_mrope = _mrope(cfg, spec.arch)
    spec.vllm_max_len = vllm_max_len(cfg)
    spec.sglang_max_len = sglang_max_len(cfg)
    from .params import count_params, recurrent_state   # after this module: params.py reads its layer kinds
    spec.params, spec.linear_params, spec.expert_params = count_params(cfg, spec)
    spec.recurrent_state_per_seq = recurrent_state(cfg, spec)
    nextn = _int(cfg, "num_nextn_predict_layers", default=0) or 0
    if _ARCH_SUFFIX.sub("", mt) in GGUF_MTP_ARCHS and 0 < nextn <= 8 and spec.layer_params:
        spec.gguf_mtp_blocks = nextn
        spec.mtp_block_params = spec.layer_params[-1] + 2 * V * d + 2 * d * d + 3 * d
    mtp = _int(cfg, "mtp_num_hidden_layers", default=0) or 0
    full = [p for p, k in zip(spec.layer_params or [], spec.layer_kinds) if k == FULL]
    if 0 < mtp <= 8 and spec.linear_state and full:
        # Qwen 3.5+'s MTP module (vLLM qwen3_5_mtp): mtp full-attention decoder layers, fc (2d -> d) and three norms
        spec.mtp_layers, spec.mtp_params = mtp, mtp * full[-1] + 2 * d * d + 3 * d
        # its layers' matmuls: a full layer less its four norms (input, post-attention, q_norm, k_norm) and a MoE router
        router = (spec.n_experts * d + (d if _int(cfg, "shared_expert_intermediate_size", default=0) else 0)
                  if spec.n_experts else 0)
        spec.mtp_linear = mtp * (full[-1] - 2 * d - 2 * spec.head_dim_k - router)
    if cfg.get("_omni"):
        spec.notes.append("an omni model: its thinker's decoder as described; the audio encoder, the talker and the "
                          "speech decoder are not counted")
    if cfg.get("_vision") is not None:
        spec.vision = dict(cfg["_vision"])
        pre = cfg.get("preprocessor_config") or {}
        # the largest image (vLLM's dummy one), in pixels: preprocessor_config.json's max_pixels where the file gives
        # one (transformers' Qwen2-VL processor sets size.longest_edge from it: dots.ocr's), else size.longest_edge
        edge = pre.get("max_pixels") or (pre.get("size") or {}).get("longest_edge")
        if edge:
            spec.vision["_max_pixels"] = int(edge)
        least = pre.get("min_pixels") or (pre.get("size") or {}).get("shortest_edge")  # the smallest (MM_DUMMY)
        if least:
            spec.vision["_min_pixels"] = int(least)
        if pre.get("max_patches"):  # Llama 4's processor: at most this many 336-pixel tiles an image (mllama4.py)
            spec.vision["_max_tiles"] = int(pre["max_patches"])
        if spec.vision.get("model_type") == "pixtral":  # patches merged merge x merge into one token (PIXTRAL_MERGE)
            merge = cfg.get("spatial_merge_size") or (2 if cfg.get("_wrapper") == "mistral3" else 1)
            spec.vision["_merge"] = int(merge)
        spec.mm_prefix_lm = cfg.get("use_bidirectional_attention") == "vision"
        spec.notes.append("a vision-language model: the decoder as described; its vision tower is counted where the runtime "
                          "loads it (vLLM with the weights, Ollama as a projector, llama.cpp with --mmproj)")
    if isinstance(cfg.get("audio_config"), dict) and cfg["audio_config"].get("model_type") == "gemma4_audio":
        spec.audio = dict(cfg["audio_config"])
    if not known_arch(mt):
        spec.generic = True
        spec.notes.append(GENERIC_NOTE.format(mt=mt))
    if spec.params > 10 ** 13:
        raise UserError(f"{name}: {spec.params:.3g} parameters is not a plausible model")
    return spec


def _per_kind_heads(cfg: dict, spec: LLMSpec) -> None:
    """Gemma 4's full-attention (global) layers have their own head size (global_head_dim, 512 when absent) and, with
    attention_k_eq_v, their own KV heads (num_global_key_value_heads): transformers' Gemma4TextConfig per_layer_config.
    Both K and V are cached there: with k_eq_v the values are the key projection's output under another norm (v_norm,
    Gemma4TextAttention), not a copy of the keys. Gemma-4-31B in vLLM 0.19 at TP 2: 3.58x printed for 4096 tokens needs
    the global layers' K and V (K alone gives 3.80x)."""
    if not spec.arch.startswith("gemma4"):
        return
    if FULL in spec.layer_kinds:
        _global_heads(cfg, spec)
    from .gemma4_ple import share_kv   # E2B / E4B: per-layer embeddings and KV layers shared across the stack
    share_kv(cfg, spec)


def _global_heads(cfg: dict, spec: LLMSpec) -> None:
    gh = _int(cfg, "global_head_dim", default=512)
    gkv = (_int(cfg, "num_global_key_value_heads") if cfg.get("attention_k_eq_v") else None) or spec.n_kv_heads
    if not 1 <= gh <= 4096 or not 1 <= gkv <= spec.n_heads or spec.n_heads % gkv:
        raise UserError(f"config global_head_dim = {gh} / num_global_key_value_heads = {gkv} is not plausible for "
                        f"{spec.n_heads} attention heads")
    spec.layer_kv_heads = [gkv if k == FULL else spec.n_kv_heads for k in spec.layer_kinds]
    if cfg.get("attention_k_eq_v"):
        spec.no_v_proj_layers = tuple(i for i, k in enumerate(spec.layer_kinds) if k == FULL)
    spec.layer_kv_elems = [2 * h * (gh if k == FULL else spec.head_dim_k)
                           for k, h in zip(spec.layer_kinds, spec.layer_kv_heads)]


def gguf_blocks(spec: LLMSpec) -> LLMSpec:
    """The model as its GGUF stores it: the multi-token-prediction blocks appended (a copy; the spec when none)."""
    k = spec.gguf_mtp_blocks
    if not k or spec.weights_bytes or spec.layer_kv_elems or spec.layer_kv_heads:
        return spec
    extra = k * spec.mtp_block_params
    routed = k * spec.n_experts * 3 * spec.hidden * spec.moe_intermediate
    return replace(spec, layer_kinds=list(spec.layer_kinds) + [FULL] * k, params=spec.params + extra,
                   linear_params=(spec.linear_params or 0) + extra, expert_params=(spec.expert_params or 0) + routed,
                   layer_params=list(spec.layer_params) + [spec.mtp_block_params] * k, gguf_mtp_blocks=0,
                   notes=list(spec.notes) + [f"its GGUF keeps {k} multi-token-prediction block(s) after the "
                                             f"{spec.n_layers} layers (with copies of the token table and head): "
                                             f"{spec.n_layers + k} blocks, as Ollama prices them"])


# Readers and built-in names live in their own modules, which import this one: `spec.load_gguf` etc. resolve to
# them on first use (PEP 562), so either side can be imported first.
_READERS = {"from_tensor_table": "files", "load_config": "files", "load_safetensors": "files",
            "weights_next_to": "files", "from_gguf_metadata": "gguf", "load_gguf": "gguf", "read_gguf": "gguf",
            "builtin_names": "names", "load_builtin": "names",
            "NO_ROPE_ARCHS": "context_len", "VLLM_LEN_KEYS": "context_len", "SGLANG_LEN_KEYS": "context_len",
            "vllm_max_len": "context_len", "sglang_max_len": "context_len"}


def __getattr__(name):
    if name not in _READERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f".{_READERS[name]}", __package__), name)
