"""Names a user types for a model, resolved to a built-in description (models/*.json) and a weight format:
  - Hugging Face repo ids, with the quantization their suffix names: `...-quantized.w8a8`, `....w4a16`,
    `-AWQ`, `-AWQ-INT4`, `-GPTQ-Int4`, `-GPTQ-Int8`, `-FP8`, `-FP8-dynamic`, `-bnb-4bit`;
  - Ollama library names and tags: `qwen2.5:7b`, `llama3.1:8b-instruct-q8_0`, `gemma3:12b` (ollama_tags.py: the library
    table and each library's default build); what a repo id says beyond the format (QAT groups, a GPTQ/AWQ width,
    layers kept in 16 bits) in name_quant.py."""
import difflib
import functools
import json
import re
from pathlib import Path

from ..errors import UserError
from . import checkpoints
from .name_quant import meta_fp8, name_bits, qat_group, unsloth_dynamic
from .ollama_tags import OLLAMA_LIBRARY, OLLAMA_LIBRARY_SIZES, OLLAMA_SIZE_MODELS, ollama_tag

MODELS_DIR = Path(__file__).with_name("models")

# repo-id suffix (lower case, after the model name) -> weight format memory/llm/weights.py sizes
_REPO_QUANT = (
    (r"[-_.]w4a16\b", "w4a16"), (r"[-_.]w8a8\b", "w8a8"), (r"[-_.]w8a16\b", "int8"),
    (r"[-_.](?:auto)?awq(?:[-_.]int4|[-_.]4bit)?\b", "awq"), (r"[-_.]gptq(?:[-_.]int4)?\b", "gptq"),
    # Intel's AutoRound exports (-int4-AutoRound, -autoround-int4; an -AutoRound-GPTQ name says GPTQ, the same size)
    (r"[-_.]auto[-_]?round\b", "auto_round"),
    (r"[-_.]fp8(?:[-_.](?:dynamic|static|block))?\b", "fp8"), (r"[-_.]int8\b", "int8"), (r"[-_.]int4\b", "int4"),
    (r"[-_.]bnb[-_.]4bit\b", "bnb-4bit"), (r"[-_.]nvfp4\b", "nvfp4"), (r"[-_.]mxfp4\b", "mxfp4"),
)
_STRIP = re.compile(r"[-_.](?:quantized|instruct|it|chat|hf|base|gguf|awq|gptq|fp8|int4|int8|w4a16|w8a8|w8a16|"
                    r"dynamic|static|block|bnb|4bit|nvfp4|mxfp4|\d{4})(?=[-_.]|$)")


# families kv knows of but has no truthful built-in description for: (canonical-name pattern, family, what is not
# modelled). A name matching one is refused with what is missing, never read as a neighbouring built-in.
UNDESCRIBED = (
    # Qwen3.8-Flash-Next (Qwen4ExpForConditionalGeneration, model_type qwen4_exp; its config.json as a third-party
    # research note quotes it): 36 gated-DeltaNet and 12 Qwen Sparse Attention layers whose block-sparse indexer keeps
    # its own key cache (indexer_head_dim 128, indexer_kv_heads 1), hyper-connections (hc_count 4) and an n-gram
    # per-layer embedding table (ngram_vocab_size_base 2e7, ple_layer_ids; "51B n-gram embedding" on the card, which
    # llama.cpp qwen4exp looks up host-side). None of these is read here
    (r"^qwen3\.8-flash-next(?:$|-)", "Qwen3.8-Flash-Next (qwen4_exp)",
     "not modelled: its Qwen Sparse Attention layers keep an indexer key cache beside K and V, its residual stream is "
     "widened by hyper-connections and its 51B-parameter n-gram per-layer embedding table may live off the GPU; kv reads "
     "none of these, so neither its cache nor its weights on the GPU are computed; a config.json given with --config "
     "is refused the same way"),
    (r"^qwen3\.[5-9]", "Qwen 3.5 and later",
     "no built-in description of this size (built in: Qwen3.5-2B, Qwen3.5-4B, Qwen3.5-9B, Qwen3.5-27B (as Qwen3.6-27B), Qwen3.5-35B-A3B "
     "(as Qwen3.6-35B-A3B), Qwen3.5-122B-A10B, Qwen3.5-397B-A17B, Qwen3.6-35B-A3B, Qwen3.6-27B, Qwen3.8-27B); a config.json "
     "given with --config is read with its gated-DeltaNet layers' state as vLLM pages it"),
    (r"^gemma-?4(?![.\d])", "Gemma 4",
     "no built-in description of this size (built in: Gemma-4-31B, Gemma-4-26B-A4B, Gemma-4-12B, Gemma-4-E4B, "
     "Gemma-4-E2B); a config.json given with --config is read with its global layers' own head size and KV heads, its "
     "per-layer embedding table and its KV-shared layers"),
    # NVIDIA Nemotron-H / Nemotron 3 (nemotron_h, nemotron_h_moe): Mamba-2 layers, a few attention layers and MLP or
    # MoE layers in one hybrid_override_pattern (spec.NEMOTRON_H_BLOCKS). Built in: Nemotron 3 Nano 30B-A3B; the other
    # sizes (Nemotron-H 8B/47B/56B, Nemotron Nano v2 9B/12B, Nemotron 3 Super / Ultra) only from their config.json.
    # Not NVIDIA's 2023 Nemotron-3 8B (nemotron-3-8b-base-4k: a dense decoder, transformers' NemotronConfig), nor
    # Nemotron-4, Nemotron-Mini or the Llama-3.1-Nemotron fine-tunes
    # Nemotron 3 Super (120B-A12B): latent-projected experts (moe_latent_size), read from a config.json since task kv54
    # (params.nemotron_h_params); no built-in: its config.json was not read (a Megatron-Bridge test gives its MoE alone)
    (r"^(?:nvidia-)?nemotron-?3-super(?:$|-)", "NVIDIA Nemotron-H / Nemotron 3",
     "no built-in description (its config.json was not read; built in: NVIDIA-Nemotron-3-Nano-30B-A3B); a config.json "
     "given with --config is read with its latent-projected experts (moe_latent_size: routed experts at the latent "
     "width, fc1/fc2 latent projections), Mamba-2 and attention layers"),
    (r"^(?:nvidia-)?nemotron-?(?:h(?![a-z\d])|3-(?:nano|super|ultra)|nano-?(?:3(?!\d)|\d+b-v2))",
     "NVIDIA Nemotron-H / Nemotron 3",
     "no built-in description of this size (built in: NVIDIA-Nemotron-3-Nano-30B-A3B); a config.json given with "
     "--config is read with its hybrid_override_pattern (Mamba-2, attention, MLP and MoE layers) and its Mamba-2 "
     "state (heads, groups, d_state) for vLLM and llama.cpp"),
    # DeepSeek sparse attention (DeepSeek-V3.2, GLM-5 / 5.1 / 5.2: GlmMoeDsaForCausalLM): GLM-5 is built in (its
    # config.json read), its cache as vLLM keeps it (cache.dsa_token_bytes: the fp8_ds_mla latent and the Lightning
    # Indexer's key), GLM-5.1 (models/GLM-5.1.json: GLM-5's config, task ellm55) and GLM-5.2 (models/GLM-5.2.json: 21
    # indexer layers, as llama.cpp's indexer_types and vLLM's index_topk_freq give them). DeepSeek-V3.2's config.json
    # was not read; given with --config it is read the same way. DeepSeek-V4's compressed attention (compress_ratio 4 /
    # 128, their own SlidingWindowMLASpec block sizes 4 / 8, a sliding window) is read for vLLM (deepseek_v4.py, task
    # dsv4): built in DeepSeek-V4-Flash (the -0731 config) and DeepSeek-V4-Pro
    (r"^(?:deepseek-v3\.2|glm-?5(?![\d]))", "DeepSeek sparse attention (DeepSeek-V3.2, GLM-5.x)",
     "no built-in description of this version (built in: GLM-5, GLM-5.1, GLM-5.2; GLM-5 sized for vLLM: each layer's latent "
     "in fp8_ds_mla records, 656 bytes a token with an fp8 cache, and the Lightning Indexer's fp8 key, 132 bytes a "
     "token); a config.json given with --config is read the same way"),
    (r"^deepseek-v4(?![.\d])", "DeepSeek-V4",
     "no built-in description of this variant (built in: DeepSeek-V4-Flash, DeepSeek-V4-Pro, their cache groups as "
     "vLLM keeps them, deepseek_v4.py); a config.json given with --config is read the same way"),
    # architectures whose layers kv's rules do not read (spec.UNMODELLED_CONFIGS refuses their config.json): Moonshot's
    # Kimi-Linear (Kimi Delta Attention) (arch25). Laguna: its config.json is read since kv56 (laguna.py), no built-in.
    # Llama-Nemotron NAS (DeciLM block_configs) is read since kv54 (nemotron_nas.py); no 51B config.json was read
    (r"^kimi-linear(?:$|-)", "Kimi-Linear (kimi_linear)",
     "not modelled: its Kimi Delta Attention layers keep recurrent and convolution states that are not gated "
     "DeltaNet's, beside MLA layers; kv sizes neither its cache nor its state; a config.json given with --config is "
     "refused the same way"),
    (r"^laguna(?:$|-)", "poolside Laguna (laguna)",
     "no built-in description (its config.json was not read); a config.json given with --config is read with its "
     "query heads by layer (num_attention_heads_per_layer), output gates and sliding-layer sinks as weights, and its "
     "sliding-window and full-attention layers' K and V (vLLM's laguna.py); a DFlash drafter is not sized"),
    (r"^llama-3[-.]\d-nemotron-(?:super|ultra)|^llama-3[-.]1-nemotron-51b", "NVIDIA Llama-Nemotron NAS (nemotron-nas)",
     "no built-in description of this checkpoint (built in: Llama-3_3-Nemotron-Super-49B (v1, v1_5), "
     "Llama-3_1-Nemotron-Ultra-253B); a config.json given with --config is read with its block_configs (each layer's "
     "KV heads, or none, and FFN width)"),
    (r"^llama-?4(?![.\d])", "Llama 4",
     "no built-in description of this size (built in: Llama-4-Scout-17B-16E); a config.json given with --config is "
     "read with its chunked local-attention layers and each MoE layer's shared expert"),
)


def builtin_names() -> list:
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def _canonical(name: str) -> str:
    """'meta-llama/Meta-Llama-3.1-8B-Instruct' and 'llama-3.1-8b' name the same architecture."""
    n = name.strip().split("/")[-1].lower().replace("_", "-")
    n = n.removeprefix("meta-")
    prev = None
    while prev != n:
        prev, n = n, _STRIP.sub("", n)
    n = n.replace("phi-3-mini-4k", "phi-3-mini").replace("phi-3-mini", "phi-3-mini-4k")
    return n


def repo_quant(name: str) -> str | None:
    low = name.strip().split("/")[-1].lower()
    for pattern, quant in _REPO_QUANT:
        if re.search(pattern, low):
            return quant
    return None


_SIZE = re.compile(r"(?:^|-)\d+(?:\.\d+)?[bm](?:$|-)")
# words after a model name that make it another architecture (DeepSeek-R1-Distill-Qwen-32B is a Qwen2.5-32B,
# Phi-4-mini a 3.8 B model): a built-in name without a size in it is read through only when none follows
_VARIANT = re.compile(r"(?:^|-)(?:distill|mini|small|medium|tiny|nano|lite|flash|draft|eagle\d*|mtp)(?:$|-)")
# words before or after a base model's name that make the model a drafter for it (an EAGLE-3 head is one layer), not the
# base: 'Qwen3-8B-Eagle3', 'AngelSlim/Qwen3-8B_eagle3', 'RedHatAI/Qwen3-8B-speculator.eagle3'
_DRAFTER = re.compile(r"(?:^|[-.])(?:draft|eagle\d*|mtp|dflash|medusa|speculator)(?:$|[-.])")


# a MoE checkpoint's expert-pruned or -merged variant (REAP, REAM) keeps fewer routed experts than the model it names,
# which only its own config.json or GGUF counts (crucible-labs/Qwen3.6-35B-A3B-REAP-48-Q3K-mixed-GGUF: expert_count
# 133 of 256): built in where described (models/*-REAP*.json, *-REAM.json), else refused, never read as the base
_PRUNED = re.compile(r"(?:^|-)(reap|ream|pruned)(?:$|-|\d)")


def _refuse_pruned(name: str, wanted: str, names: list) -> None:
    word = _PRUNED.search(wanted)
    if not word or any(_PRUNED.search(c) and (wanted == c or wanted.startswith(c + "-")) for c in map(_canonical, names)):
        return  # a described variant ('...-reap-48-q3k-mixed' is Qwen3.6-35B-A3B-REAP-48 with a tool's words after it)
    base = [n for n in names if wanted.startswith(_canonical(n) + "-")]
    of = f" of {max(base, key=lambda n: len(_canonical(n)))}" if base else ""
    raise UserError(f"unknown model {name!r}: an expert-pruned ({word.group(1).upper()}) variant{of}, which keeps fewer "
                    "routed experts than the model it was pruned from; how many is never guessed - give its config.json "
                    "with --config FILE (or its GGUF with --gguf FILE)")


def _other_words_keep_the_architecture(builtin: str, rest: str) -> bool:
    """True when the words after a built-in name (an uploader's or tool's: 'unsloth', 'autoround', 'abliterated',
    'thinking') do not name another model: no other size, no distilled or smaller variant."""
    if _SIZE.search(rest) or "distill" in rest or _DRAFTER.search(rest):
        return False
    return bool(_SIZE.search(builtin)) or not _VARIANT.search(rest)


# DeepSeek-R1's distilled models are their base models' architectures (the model cards' "Base Model" column)
DISTILL_BASES = {"qwen-1.5b": "Qwen2.5-1.5B", "qwen-7b": "Qwen2.5-7B", "qwen-14b": "Qwen2.5-14B", "qwen-32b": "Qwen2.5-32B",
                 "llama-8b": "Llama-3.1-8B", "llama-70b": "Llama-3.3-70B"}
_DISTILL = re.compile(r"distill-((?:qwen|llama)-\d+(?:\.\d+)?b)(?:$|-)")


# fine-tunes published under their own family word keep the base model's architecture: Qwen2.5-Coder-7B and
# Qwen2.5-Math-7B are Qwen2.5-7B's geometry, Qwen3-Coder-30B-A3B is Qwen3-30B-A3B's (their config.json differ in
# max_position_embeddings only). The word is dropped when what remains is a built-in name.
_FINETUNE = re.compile(r"-(coder|math)(?=-)")


# later releases on a built-in's geometry whose config.json changed its context: (built-in names, pattern of the name
# a user gives, max_position_embeddings, where it was read). vLLM's default --max-model-len, its rotary table and the
# largest context follow the release, not the April 2025 base model (40,960).
RELEASE_CONTEXT = (
    # Qwen/Qwen3-4B-Instruct-2507, -30B-A3B-Instruct-2507, -235B-A22B-Instruct-2507 and their -Thinking-2507
    # config.json: max_position_embeddings 262144 (rope_theta 5e6 / 1e7; the geometry is the base model's); Ollama's
    # qwen3 2507 tags (qwen3:30b-a3b-thinking-2507-q8_0) are those releases
    (("Qwen3-4B", "Qwen3-30B-A3B", "Qwen3-235B-A22B"), r"(?:^|[-_.:])2507(?:$|[-_.])", 262144, "the 2507 release's config.json"),
    # Qwen/Qwen3-Coder-30B-A3B-Instruct config.json: max_position_embeddings 262144; Ollama's qwen3-coder:30b is it
    (("Qwen3-30B-A3B",), r"qwen3-coder", 262144, "Qwen3-Coder's config.json"),
    # mistralai/Mistral-Nemo-Instruct-2407 config.json (revision 04d8a905): max_position_embeddings 131072, where the
    # Base-2407 config Mistral-Nemo-12B.json was read from says 1024000
    (("Mistral-Nemo-12B",), r"mistral-nemo-instruct", 131072, "Mistral-Nemo-Instruct-2407's config.json"),
    # moonshotai/Kimi-K2-Instruct-0905: yarn factor 64 over 4096 (a third-party report of its config.json), 256K context
    (("Kimi-K2-Instruct",), r"(?:^|[-_.:])0905(?:$|[-_.])", 262144, "the 0905 release's config.json"),
    # microsoft/Phi-4-reasoning config.json: Phi-4's fields (vocab 100352, hidden 5120, 40 layers, 40 heads, 10 KV
    # groups, intermediate 17920) with max_position_embeddings 32768 and rope_theta 500000 (Lightning-AI/litgpt's config
    # table transcribes it beside phi-4's 16384); Ollama's phi4-reasoning:14b is it (Ollama 0.13.5 prints general.name
    # 'Phi 4 Reasoning' and 1600.00 MiB of f16 cache at 8192 cells = 40 x 2 x 10 x 128 x 2 bytes a cell:
    # Small-ed1/ContextHarbor ollama.log, batch 49, after first sight). 'Phi-4-reasoning' is read as Phi-4 by the words
    # after its name (names no architecture)
    (("Phi-4",), r"phi-?4-reasoning", 32768, "Phi-4-reasoning's config.json"),
    # microsoft/Phi-3-mini-128k-instruct: Phi-3-mini-4k's geometry (phi3, 32 layers, 32 KV heads x 96, vocab 32064) with
    # 131072 positions (LongRoPE; its sliding_window 262144 holds no layer to a window); Ollama's phi3 '-mini-128k' tags
    # are it. Ollama 0.15.5 prints n_ctx_train=131072 for that GGUF ('Phi 3 Mini 128k Instruct', 'requested context
    # size too large for model num_ctx=262144 n_ctx_train=131072') and 49152.00 MiB of f16 cache at 131072 cells = 32 x
    # 2 x 3072 x 2 bytes a cell (MarvellianRohit/Nexus-AI ollama.log, batch 55, after first sight); kv read the tag as
    # the 4k model and lowered the context to 4096
    (("Phi-3-mini-4k",), r"(?:^|[-_.:/])mini-128k(?:$|[-_.])", 131072,
     "Phi-3-mini-128k-instruct (its GGUF's n_ctx_train, as Ollama prints it)"),
)


# releases and fine-tunes published under their own names on a built-in's geometry: (pattern of the canonical name,
# built-in, the evidence that the geometry is that built-in's). A config.json given with --config is read as it is.
SAME_GEOMETRY = (
    # Mistral NeMo 12B: the Base-2407 and Instruct-2407 repos (their words 'base', 'instruct', '2407' are stripped from
    # the canonical name, leaving 'mistral-nemo') are one geometry: MistralForCausalLM, 40 layers, 32 heads, 8 KV heads
    # x 128, hidden 5120, 12.25 B parameters (Instruct-2407 revision 04d8a905 as a model-registry audit reads its
    # config.json). llama.cpp b6050 prints what these fields give for the Instruct GGUF: 640.00 MiB of f16 cache at 4096
    # cells = 40 x 2 x 8 x 128 x 2 bytes a cell (deepyes02/yeti-ai llama_server.log, batch 42, after first sight).
    # Anything after the name (Mistral-NeMo-Minitron-8B) is another model
    (r"^mistral-nemo$", "Mistral-Nemo-12B", "Mistral NeMo 12B (Base-2407 / Instruct-2407: 40 layers, 8 KV heads x 128, "
     "12.25 B parameters)"),
    # DeepSeek-V3.1 (and its -Terminus update): DeepseekV3ForCausalLM, read by KAITO's preset generator from its
    # config.json exactly as V3's (kaito presets/workspace/generator/generator_test.go: 641.30 GiB of FP8 files,
    # 70272 KV bytes a token = 61 layers x 576 x 2, 163840 tokens). V3.2 is another architecture (its indexer).
    (r"^deepseek-v3\.1(?:$|-)", "DeepSeek-V3", "the same config as DeepSeek-V3 (DeepseekV3ForCausalLM, 61 layers, "
     "MLA 512 + 64, 256 experts; KAITO's generator reads both alike)"),
    # Google's MedGemma 27B / 4B are Gemma 3 fine-tunes (Gemma3ForConditionalGeneration; the -text- variant its decoder):
    # llama.cpp#18270 prints MedGemma-27B's 63 layers with the output, freq_scale 0.125 and a non-SWA cache of
    # 10 layers x 35328 cells in 2760.00 MiB = 16 KV heads x 128, Gemma-3-27B's geometry
    (r"^medgemma-(?:text-)?(4b|27b)(?:$|-)", "Gemma-3-{0}", "a Gemma 3 fine-tune with Gemma-3-{0}'s config"),
    # Qwen/Qwen3.5-27B: Qwen3_5ForConditionalGeneration with the 27B geometry Qwen 3.6 and 3.8 kept: THUDM/slime
    # scripts/models/qwen3.5-27B.sh (64 layers, 24 heads, 4 query groups x 256, hidden 5120, ffn 17408, vocab 248320,
    # untied, gated attention) and pages quoting its config.json (full_attention_interval 4, 262144 positions,
    # mtp_num_hidden_layers 1) state the fields Qwen3.6-27B.json has (task ellm11)
    # MiniMax-M2.5 (and M2.1): the MiniMaxM2 config MiniMax-M2.7.json was read from (a third-party parameter counter's
    # fixture: 62 layers, hidden 3072, 48 heads, 8 KV heads x 128, 256 experts of 1536, top 8, vocab 200064, 3 MTP
    # modules, FP8; "M2.1 has identical architecture to M2.5"); MiniMax-M2 itself: the same fields as the defaults of
    # ModelCloud/GPTQModel's port of its config (gptqmodel/hf_minimax_m2, checkpoint MiniMaxAI/MiniMax-M2: rotary_dim 64
    # of 128, 3 MTP modules, untied), and SGLang's MiniMax M2.1/M2 guide serves both alike (task llm-fixups). A size
    # after the name is another model (Cerebras' expert-pruned MiniMax-M2-REAP-172B-A10B), not read as this one
    (r"^minimax-m2(?:\.[15])?(?:$|-(?!(?:.*-)?\d+(?:\.\d+)?b(?:$|-)))", "MiniMax-M2.7", "the MiniMax-M2 config of MiniMax-M2.7 (62 layers, 256 experts of 1536, "
     "8 KV heads x 128)"),
    # GLM-4.6 (zai-org/GLM-4.6): Glm4MoeForCausalLM with GLM-4.7's fields; a third-party architecture write-up quotes
    # its config.json (_name_or_path zai-org/GLM-4.6: 92 layers, hidden 5120, intermediate 12288, vocab 151552, 96
    # heads, 8 KV heads x 128, attention bias, 160 routed experts of 1536, 1 shared, top 8, dense layers 0-2, 202752
    # positions), and llama.cpp b7522 prints 6624 MiB of q4_0 cache for 65536 cells = 92 x 2 x 8 x 128 x 4.5 / 8
    # bytes a cell (TkskKurumi/llama-server-benchmarks GLM-4.6/memory.log). Not GLM-4.6V (GLM-4.5V's 106B geometry);
    # as for MiniMax-M2, a size or -air after the name is another model (Cerebras' GLM-4.6-REAP-218B-A32B)
    (r"^glm-4\.6(?:$|-(?!v|air(?:$|-)|(?:.*-)?\d+(?:\.\d+)?b(?:$|-)))", "GLM-4.7", "the GLM-4.7 config (Glm4MoeForCausalLM: 92 layers, 8 KV heads x 128, 160 "
     "experts of 1536, 202752 positions)"),
    # GLM-4.6V (zai-org/GLM-4.6V, Glm4vMoeForConditionalGeneration; its config.json not read from a primary copy): the
    # GLM-V line's decoder is GLM-4.5-Air's (transformers' glm4v_moe docs: "based on ... GLM-4.5-Air (106B parameters,
    # 12B active)"; the vLLM recipe: MoE, 107B, 12B active, 131072 context). llama.cpp b7522 prints what its fields
    # give (TkskKurumi/llama-server-benchmarks GLM-4.6V/memory.log, batch 30, after first sight): q4_0 cache 864 x 3 +
    # 720 = 3312 MiB at 65536 cells = 46 layers x 8 KV heads x 128 x 2 x 4.5 / 8 bytes a cell; host token table 333 MiB
    # = 151552 x 4096 in Q4_K. Its vision tower is not described. GLM-4.6V-Flash is a 9B dense model, not this one
    (r"^glm-4\.6v(?:$|-(?!flash|(?:.*-)?\d+(?:\.\d+)?b(?:$|-)))", "GLM-4.5-Air", "GLM-4.6V: GLM-4.5-Air's text decoder "
     "(glm4_moe: 46 layers, 8 KV heads x 128, 128 experts of 1408, vocab 151552); its vision tower is not described: "
     "weights and memory are the decoder's alone"),
    # Kimi-K2.5 / K2.6 (KimiK25ForConditionalGeneration): a MoonViT tower on K2-Thinking's text decoder; the
    # parameter-counter fixture Kimi-K2-Thinking.json cites copies K2.5's text_config with K2-Thinking's fields (61
    # layers, MLA 512 + 64, 64 heads, 384 experts of 2048) and 262144 positions, and K2.6's quantization_config states
    # the same int4 group-32 experts. The tower is not described (a note says so); a size after the name is another
    # model (an expert-pruned Kimi-K2.5-REAP-500B)
    (r"^kimi-k2\.[56](?:$|-(?!(?:.*-)?\d+(?:\.\d+)?b(?:$|-)))", "Kimi-K2-Thinking", "K2-Thinking's text decoder (kimi_k2: 61 layers, MLA 512 + 64, 384 "
     "experts of 2048, int4 experts in groups of 32); its MoonViT vision tower is not described: weights and memory "
     "are the decoder's alone"),
    # Qwen/Qwen3.5-35B-A3B: THUDM/slime scripts/models/qwen3.5-35B-A3B.sh (40 layers, 16 heads, 2 query groups x 256,
    # hidden 2048, vocab 248320, untied, 256 experts of 512 + a shared 512, top 8, linear-attention frequency 4, 16 key
    # and 32 value heads x 128, conv kernel 4), the fields Qwen3.6-35B-A3B.json has; slime's qwen36-35B-A3B.sh says
    # 3.6 "uses the same language/MoE topology" and sources the 3.5 script (batches 31-32, after first sight)
    (r"^qwen3\.5-35b-a3b(?:$|-)", "Qwen3.6-35B-A3B", "Qwen3.5-35B-A3B: the config of Qwen3.6-35B-A3B (the same 35B-A3B "
     "Qwen 3.5 topology: 40 layers, 10 full-attention of 2 KV heads x 256, 30 gated-DeltaNet, 256 experts of 512)"),
    # Qwen/Qwen3-Coder-Next: Qwen3NextForCausalLM with Qwen3-Next-80B-A3B's fields (48 layers, hidden 2048, 16 heads, 2 KV
    # heads x 256, 512 experts of 512 + a shared 512, top 10, linear 16 key / 32 value heads x 128, vocab 151936,
    # untied); only rope_theta differs (5e6). Third-party test fixtures and notes quote its config.json so, one with
    # the published total 79,674,391,296; llama.cpp prints 397 MiB of context at -c 4096 -np 4 = 12 x 4096 x 2 x 2 x
    # 256 x 2 bytes + 4 x 36 DeltaNet states (Chaoses-Ib notes, batch 31, after first sight)
    (r"^qwen3-coder-next(?:$|-(?!(?:.*-)?\d+(?:\.\d+)?b(?:$|-)))", "Qwen3-Next-80B-A3B", "Qwen3-Coder-Next: the config of "
     "Qwen3-Next-80B-A3B (Qwen3NextForCausalLM: 48 layers, 12 full-attention of 2 KV heads x 256, 36 gated-DeltaNet, 512 "
     "experts of 512, top 10)"),
    # Qwen/Qwen2-72B(-Instruct): Qwen2ForCausalLM with Qwen2.5-72B's fields; a model-config table transcribing
    # huggingface.co/Qwen/Qwen2-72B-Instruct/blob/main/config.json (its qwen2_72b_config: hidden 8192, 64 heads,
    # 8 KV heads, intermediate 29568, 80 layers, vocab 152064, 32768 positions) and vllm-project/vllm's feature request
    # on draft vocabularies (the 72B's vocab_size is 152064) give what Qwen2.5-72B.json holds (batch 50, after first
    # sight: leadawon/structrag's TP 2 run). Qwen2-VL-72B and Qwen2-Math-72B are other names, not read as this one
    (r"^qwen2-72b(?:$|-)", "Qwen2.5-72B", "Qwen2-72B: the config of Qwen2.5-72B (Qwen2ForCausalLM: 80 layers, 64 heads, "
     "8 KV heads x 128, hidden 8192, intermediate 29568, vocab 152064, untied)"),
    # Qwen/Qwen3-VL-Embedding-2B: Qwen3VLForConditionalGeneration pooled for embeddings (vLLM --runner pooling --convert
    # embed), on Qwen3-VL-2B-Instruct (its config.json not read from a primary copy): its embeddings are 2048 wide
    # (a host's README: "the model's 2048-dimensional MRL output"), and vLLM 0.11.0 prints 76,848 tokens for 8.21 GiB of
    # KV cache = 114,688 bytes a token = 28 layers x 8 KV heads x 128 x 2 x 2 (zjpzhao/vllm-qwen3vl-cu118-t4, batch 45)
    (r"^qwen3-vl-embedding-2b(?:$|-)", "Qwen3-VL-2B", "Qwen3-VL-Embedding-2B: the Qwen3-VL-2B config (28 layers, "
     "8 KV heads x 128, hidden 2048, its 24-block vision tower); its own config.json was not read"),
    # Mistral-Small-3.2-24B-Instruct-2506: the config Mistral-Small-3.1-24B.json was read from, its _source says (the
    # Ollama mistral-small3.2 library maps to it too, ollama_tags.OLLAMA_LIBRARY)
    (r"^mistral-small-3\.2-24b(?:$|-)", "Mistral-Small-3.1-24B", "Mistral-Small-3.2-24B: Mistral-Small-3.1-24B's "
     "geometry (Mistral3, 40 layers, 8 KV heads x 128, its vision tower)"),
    (r"^qwen3\.5-27b(?:$|-)", "Qwen3.6-27B", "Qwen3.5-27B: the config of Qwen3.6-27B (the same 27B Qwen 3.5 geometry: "
     "64 layers, 16 full-attention of 4 KV heads x 256, 48 gated-DeltaNet)"),
)


def _same_geometry(wanted: str, names: list):
    for pattern, base, why in SAME_GEOMETRY:
        m = re.search(pattern, wanted)
        if m:
            b = base.format(*(g.upper() for g in m.groups()))
            if b in names:
                return b, why.format(*(g.upper() for g in m.groups()))
    return None


def _read_as(name: str, builtin: str, quant, why: str):
    """The built-in `builtin` for a repo id that carries its name among other words, with the quantization the id
    names and the per-release layouts (QAT groups, Unsloth Dynamic) the id implies."""
    spec = _builtin_spec(builtin, name)
    spec.notes.append(why)
    if quant:
        spec.quant = quant
        spec.notes.append(f"weights taken as {quant} from the name {name!r}")
    qat_group(name, builtin, spec)
    name_bits(name, spec)
    unsloth_dynamic(name, spec)
    checkpoints.by_name(name, builtin, spec)
    return spec


def _named_base(name: str, wanted: str, names: list):
    """The built-in a fine-tune or distill names inside its own name with the base's size
    ('deepseek-ai/DeepSeek-R1-0528-Qwen3-8B' is Qwen3-8B's architecture, its config.json says Qwen3ForCausalLM), or
    None. Only built-in names carrying a size count, at word boundaries, not at the start (a name starting with a
    built-in is read above), the words after it keeping the architecture and none before naming a drafter; a name
    inside a longer matching one gives way to it. Two bases named are refused: which one the weights follow is never
    guessed."""
    spans = []
    for n in names:
        c = _canonical(n)
        if _SIZE.search(c):
            spans += [(m.start(), m.end(), n) for m in re.finditer(r"(?:^|(?<=-))" + re.escape(c) + r"(?=-|$)", wanted)]
    spans = [s for s in spans if not any(o[0] <= s[0] and s[1] <= o[1] and o != s for o in spans)]
    bases = sorted({n for _, _, n in spans})
    if len(bases) > 1:
        raise UserError(f"{name!r} names more than one built-in base model ({', '.join(bases)}): which one its weights "
                        "follow is never guessed - give its config.json with --config FILE")
    if len(spans) != 1 or spans[0][0] == 0:
        return None
    start, end, n = spans[0]
    if _DRAFTER.search(wanted[:start]) or not _other_words_keep_the_architecture(_canonical(n), wanted[end + 1:]):
        return None
    return n


def _release_context(name: str, n: str):
    low = name.strip().lower().replace("_", "-")
    for builtins, pattern, ctx, source in RELEASE_CONTEXT:
        if n in builtins and re.search(pattern, low):
            return ctx, source
    return None


def _builtin_spec(n: str, asked: str | None = None):
    """A built-in description: its config fields, with the notes its file carries (what it leaves out); `asked`, the
    name given, may name a later release with its own context (RELEASE_CONTEXT)."""
    from .spec import from_config
    cfg = json.loads((MODELS_DIR / f"{n}.json").read_text(encoding="utf-8"))
    cfg.pop("_source", None)
    notes = cfg.pop("_notes", [])
    release = _release_context(asked, n) if asked else None
    if release and release[0] != cfg.get("max_position_embeddings"):
        notes.append(f"{asked!r}: {release[1]} gives max_position_embeddings {release[0]:,} (the {n} base model's "
                     f"{cfg.get('max_position_embeddings'):,}); the geometry is the base model's")
        cfg["max_position_embeddings"] = release[0]
    spec = from_config(cfg, name=n)
    spec.notes.extend(str(x) for x in notes)
    return spec


@functools.lru_cache(maxsize=1)
def _source_repos() -> dict:
    """The Hugging Face repo id each built-in's config.json was read from (its _source), lower case -> built-in."""
    out = {}
    for n in builtin_names():
        src = json.loads((MODELS_DIR / f"{n}.json").read_text(encoding="utf-8")).get("_source") or ""
        m = re.match(r"https://huggingface\.co/([\w.-]+/[\w.-]+)/", src)
        if m:
            out[m.group(1).lower()] = n
    return out


def bare_id(name: str) -> str:
    """A Hub repo id (any gguf_repo form) with a trailing '/' or an '@revision' (Qwen/Qwen3-8B@main): the id."""
    m = re.fullmatch(r"((?:https?://)?(?:hf\.co/|huggingface\.co/)?[\w.-]+/[\w.-]+(?::[\w.-]+)?)(?:@[\w.-]+)?/*",
                     name.strip())
    return m.group(1) if m else name


def load_builtin(name: str):
    """LLMSpec for a built-in name, a Hugging Face repo id, a GGUF repo with its tag (gguf_repo.py) or an Ollama
    library name[:tag]."""
    from . import gguf_repo, unsloth
    name = bare_id(name)
    hub = gguf_repo.split(name)
    gguf_repo.refuse_checkpoint_repo(name, hub, _source_repos())
    if not hub:
        return _load_builtin(name)
    repo, quant, tagged, note = hub
    spec = _load_builtin(repo)
    gguf_repo.refuse_checkpoint_type(name, hub, spec.quant)
    spec.gguf_tag = quant if tagged else None
    if not unsloth.base_type(quant, "unsloth" in name.lower()):  # an Unsloth Dynamic tag is a range: plan() reads gguf_tag
        spec.quant = quant
    spec.notes.append(note)
    return spec


def _foreign_org(name: str, builtin: str):
    """(the organisation a repo id names, the repo the built-in's config.json was read from) when the two differ:
    'meta-lama/Llama-3.1-8B-Instruct' is sized as Llama-3.1-8B whatever the organisation, and says so; None when
    the id names no organisation or the built-in's own."""
    org = name.strip().split("/")[0] if name.count("/") == 1 else ""
    repo = next((r for r, b in _source_repos().items() if b == builtin), None)
    if not org or not repo or repo.split("/")[0] == org.lower():
        return None
    src = json.loads((MODELS_DIR / f"{builtin}.json").read_text(encoding="utf-8")).get("_source") or ""
    m = re.match(r"https://huggingface\.co/([\w.-]+/[\w.-]+)/", src)
    return org, m.group(1) if m else repo


def _load_builtin(name: str):
    from .spec import from_config
    names = builtin_names()
    # the repo a built-in's config.json was read from is that built-in, whatever its name's words
    # ('mistralai/Mistral-Nemo-Base-2407', 'CohereForAI/c4ai-command-r-v01': offered by suggestions(), so resolved)
    source = _source_repos().get(name.strip().lower())
    if source:
        return _builtin_spec(source, name)
    rel = checkpoints.release(name)  # a release read by its repo id (checkpoints.RELEASES)
    if rel:
        spec = _builtin_spec(rel[0], name)
        spec.quant, spec.quant_skip = rel[1], rel[2](spec)
        spec.notes.append(f"{name!r}: {rel[3]}")
        return spec
    tag = ollama_tag(name)
    lookup, quant, note = (tag if tag else (name, repo_quant(name), None))
    wanted = _canonical(lookup)
    distill = _DISTILL.search(wanted)
    if distill and distill.group(1) in DISTILL_BASES and not tag:
        base = DISTILL_BASES[distill.group(1)]
        note = f"{name!r} is a distilled {base} (same architecture)" + (f"; weights taken as {quant} from the name"
                                                                       if quant else "")
        lookup, wanted = base, _canonical(base)
    fine = _FINETUNE.search(wanted)
    if fine and not tag and not any(_canonical(n) == wanted for n in names):
        base = _FINETUNE.sub("", wanted, count=1)
        hit = [n for n in names if _canonical(n) == base]
        if hit:
            note = (f"{name!r} is a {fine.group(1)} fine-tune of {hit[0]} (same architecture; its trained context may "
                    f"differ)" + (f"; weights taken as {quant} from the name" if quant else ""))
            wanted = base
    if not tag:
        _refuse_pruned(name, wanted, names)
    # a tag names the library's model ('qwen3.5:27b' is Qwen3.5-27B): read through the same table when not built in
    same = None if tag and any(_canonical(n) == wanted for n in names) else _same_geometry(wanted, names)
    if same:
        note = (f"{note}; it is {same[1]}: sized as {same[0]}" if tag else
                f"{name!r} is {same[1]}: sized as {same[0]}" + (f"; weights taken as {quant} from the name" if quant else ""))
        wanted = _canonical(same[0])
    unversioned = re.sub(r"-v\d+(\.\d+)*$", "", wanted)
    for n in sorted(names, key=lambda n: _canonical(n) != wanted):
        if _canonical(n) in (wanted, unversioned):
            spec = _builtin_spec(n, name)
            if quant:
                spec.quant = quant
                spec.notes.append(note or f"weights taken as {quant} from the name {name!r}")
            elif note:
                spec.notes.append(note)
            org = _foreign_org(name, n) if not (tag or note) else None
            if org:
                spec.notes.append(f"{name!r} read as the built-in {n}, {org[1]}'s config.json: the organisation "
                                  f"{org[0]!r} is not read (an upload under any name keeps the architecture)")
            if tag:
                spec.ollama = True
            else:
                qat_group(name, n, spec)
                name_bits(name, spec)
                unsloth_dynamic(name, spec)
                meta_fp8(name, n, spec)
                checkpoints.by_name(name, n, spec)
            if same and spec.vision and re.search(r"(?:^|-)text(?:$|-)", _canonical(name)):
                spec.vision = None  # google/medgemma-27b-text-it: Gemma3ForCausalLM, the decoder alone
                spec.notes.append(f"{name!r} is the text-only release: no vision tower")
            return spec
    # an uploader's or tool's word after the architecture ('unsloth/qwen2.5-0.5b-instruct-unsloth-bnb-4bit',
    # 'kaitchup/Phi-4-AutoRound-GPTQ-4bit', '...-abliterated'): the longest built-in name the repo id starts with,
    # at a word boundary ('qwen2.5-vl-7b-x' never reads as Qwen2.5-7B), unless the words after it name another
    # model: another size, a distilled or a smaller variant (_other_words_keep_the_architecture)
    prefixed = [n for n in names if wanted.startswith(_canonical(n) + "-")
                and _other_words_keep_the_architecture(_canonical(n), wanted[len(_canonical(n)) + 1:])]
    if prefixed and not tag:
        n = max(prefixed, key=lambda n: len(_canonical(n)))
        rest = wanted[len(_canonical(n)) + 1:]
        return _read_as(name, n, quant, f"{name!r} read as the built-in {n} (the words {rest!r} after it name no "
                                        "architecture)")
    base = None if tag else _named_base(name, wanted, names)
    if base:
        return _read_as(name, base, quant, f"{name!r} names {base} with its size: read as a fine-tune or distill on "
                                           f"{base}'s architecture (give its config.json with --config where it differs)")
    for pattern, family, why in UNDESCRIBED:
        if re.search(pattern, wanted):
            if tag:
                why = f"Ollama's {name!r} is {lookup}: " + why
            if "refused the same way" in why:  # refused by design: no file would help
                raise UserError(f"unknown model {name!r} ({family}): {why}")
            raise UserError(f"unknown model {name!r} ({family}): {why}; its geometry is never guessed - give the "
                            "model's config.json with --config FILE (or a GGUF with --gguf FILE)")
    close = suggestions(name)
    hint = f" (closest: {', '.join(close)})" if close else ""
    if any(":" in c for c in close):  # composed from the library table and the built-in sizes, not from ollama.com
        hint += "; the Ollama tags offered are the library table's sizes that have a built-in description, not checked against ollama.com"
    if tag:
        lib, _, size = name.strip().lower().partition(":")
        hint += f"; Ollama's {lib} library has no built-in description of size {size or 'latest'!r}"
    raise UserError(f"unknown model {name!r}{hint}; `gpu-garden kv --model list` shows the built-in names; a size or "
                    "variant without one is never guessed from its family: give its config.json with --config FILE "
                    "(or a GGUF with --gguf FILE)")


@functools.lru_cache(maxsize=1)
def _known_names() -> tuple:
    """Every name `--model` resolves: the built-in names, the Hugging Face repo ids their configs were read from and
    the Ollama tags the library table maps to them."""
    names = builtin_names()
    out = list(names)
    for n in names:
        src = json.loads((MODELS_DIR / f"{n}.json").read_text()).get("_source") or ""
        m = re.match(r"https://huggingface\.co/([\w.-]+/[\w.-]+)/", src)
        if m:
            out.append(m.group(1))
    for lib, (pattern, default) in OLLAMA_LIBRARY.items():
        sizes = set(OLLAMA_SIZE_MODELS.get(lib, {}))
        if pattern and "{size}" in pattern:
            head, tail = pattern.split("{size}")
            sizes |= {n[len(head):len(n) - len(tail)].lower() for n in names
                      if n.startswith(head) and n.endswith(tail) and len(n) > len(head) + len(tail)}
        elif default:
            sizes.add(default)
        if lib in OLLAMA_LIBRARY_SIZES:
            sizes &= set(OLLAMA_LIBRARY_SIZES[lib])
        out += [f"{lib}:{sz}" for sz in sorted(sizes) if "-" not in sz]
    return tuple(out)


def suggestions(name: str, n: int = 6) -> list:
    """The known names closest to a mistyped one (difflib's ratio, closest first): offered, never resolved. Names
    in the asked form first (an Ollama tag for 'lib:size', a repo id for 'org/name')."""
    q = name.strip().lower()
    if not q or len(q) > 120:  # difflib is quadratic: a long string is no typo
        return []
    form = (lambda k: ":" in k) if ":" in q else (lambda k: "/" in k) if "/" in q else (lambda k: ":" not in k and "/" not in k)
    scored = [(difflib.SequenceMatcher(None, q, k.lower()).ratio(), k) for k in _known_names()]
    out = [k for r, k in sorted(scored, key=lambda rk: (-rk[0], not form(rk[1]), rk[1])) if r >= 0.6]
    same = [k for k in out if form(k)]
    return (same or out)[:n]
