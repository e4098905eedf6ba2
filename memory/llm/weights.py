"""Weight bytes: exact from a file, else parameters x bits, by tensor role.

GGUF quantization types give their token embedding and output head other types than the blocks (llama.cpp
tools/quantize: the output tensor is Q6_K for the K-quants and Q4_0, Q8_0 for Q8_0; a tied embedding doubles as
the output and takes the output's type). Block rates are llama.cpp's published whole-file sizes for Llama-3-8B
(QUANT_OPTIONS, e.g. Q4_K_M 4.58 GiB) less its 525 M-parameter embedding and output at their role types, so a
model whose embedding is a larger (Gemma-3, 262k vocabulary) or smaller (Mixtral, 32k) share is not sized at
Llama-3's mix. AWQ/GPTQ/fp8/int8 checkpoints quantize only the decoder-block matmuls; embeddings, head and
norms stay 16-bit."""
import re

from ..errors import UserError
# the checkpoint formats' bits, re-exported: kv, plan_weights and the tests read them as weights.X
from .linear_quant import (DEFAULT_GROUP, DENSE_BITS, FORMAT_ALIASES, GROUP_OVERHEAD_BITS, LINEAR_BITS,  # noqa: F401
                           SCALE_BITS, SYM_DROPS_ZERO, ZERO_BITS, experts_int8_bits, linear_bits, skip_matcher,
                           skipped_linear_params)
from ..estimate.headers import GGML_BLOCKS, IK_BLOCKS
from .spec import FULL, LINEAR, SLIDING, LLMSpec

# whole-file bits per weight of Llama-3-8B (8.03 B parameters) per GGUF type
GGUF_BPW = {"F32": 32, "F16": 16, "BF16": 16, "Q8_0": 8.51, "Q6_K": 6.57, "Q5_K_M": 5.70, "Q5_K_S": 5.57,
            "Q5_1": 6.04, "Q5_0": 5.57, "Q4_K_M": 4.90, "Q4_K_S": 4.67, "Q4_1": 5.11, "Q4_0": 4.64,
            "IQ4_NL": 4.68, "IQ4_XS": 4.46, "Q3_K_L": 4.31, "Q3_K_M": 4.00, "Q3_K_S": 3.65, "IQ3_M": 3.90,
            "IQ3_S": 3.70, "IQ3_XS": 3.50, "IQ3_XXS": 3.30, "Q2_K": 3.17, "Q2_K_S": 2.97, "IQ2_M": 2.95,
            "IQ2_S": 2.75, "IQ2_XS": 2.56, "IQ2_XXS": 2.31, "IQ1_M": 2.00, "IQ1_S": 1.81, "MXFP4": 4.25}
# ggml tensor types: bits per weight of one block, 8 x bytes / elements of headers.GGML_BLOCKS (ggml-common.h), the
# one table of block sizes; the types kv sizes are named here. unsloth.py (Unsloth Dynamic files) and gguf_types.py
# (--gguf-types) read TYPE_BITS too. ik_llama.cpp's own types (headers.IK_BLOCKS: IQ2_K..IQ6_K, the row-scale types and
# the repacks of headers.IK_REPACKS, which its loader prints and ubergarm's GGUFs hold) are IK_TYPES
_SIZED = ("F32", "F16", "BF16", "Q8_0", "Q6_K", "Q5_K", "Q5_0", "Q5_1", "Q4_K", "Q4_0", "Q4_1", "IQ4_NL", "IQ4_XS", "Q3_K",
          "Q2_K", "IQ3_S", "IQ3_XXS", "IQ2_S", "IQ2_XS", "IQ2_XXS", "IQ1_M", "IQ1_S", "TQ1_0", "TQ2_0", "MXFP4")
IK_TYPES = frozenset(IK_BLOCKS)
TYPE_BITS = {t: 8 * b if n == 1 else 8 * b / n for t in (*_SIZED, *IK_BLOCKS) for n, b in (GGML_BLOCKS[t],)}
# file type -> (token embedding type, output type)
ROLE_TYPES = {"Q8_0": ("Q8_0", "Q8_0"), "Q6_K": ("Q6_K", "Q6_K"), "Q5_K_M": ("Q5_K", "Q6_K"), "Q5_K_S": ("Q5_K", "Q6_K"),
              "Q5_0": ("Q5_0", "Q6_K"), "Q5_1": ("Q5_1", "Q6_K"), "Q4_K_M": ("Q4_K", "Q6_K"), "Q4_K_S": ("Q4_K", "Q6_K"),
              "Q4_0": ("Q4_0", "Q6_K"), "Q4_1": ("Q4_1", "Q6_K"), "IQ4_NL": ("IQ4_NL", "Q6_K"), "IQ4_XS": ("IQ4_XS", "Q6_K"),
              "Q3_K_L": ("Q3_K", "Q6_K"), "Q3_K_M": ("Q3_K", "Q6_K"), "Q3_K_S": ("Q3_K", "Q6_K"), "Q2_K": ("Q2_K", "Q6_K"),
              "IQ3_XS": ("IQ3_S", "Q6_K")}
# IQ3_XS (llama-quant.cpp): the file type's default type is IQ3_S, which the token embedding keeps; the output - and a
# tied embedding, quantized as the output - takes Q6_K (only IQ3_XXS and the IQ2/IQ1 types drop it to Q5_K). Its
# blocks mix IQ3_XXS (attn_q, attn_k; ffn_gate/up between the first and last eighth of the layers) with IQ3_S (the
# rest; attn_v Q4_K when n_gqa >= 4): for Llama-3-8B that is 3.27 bits a block weight, as the whole-file 3.50 less
# its embedding and output gives. The other IQ types keep their whole-file rate: their table figures do not match
# the source's mixes (IQ1_S's 1.81 would leave its blocks less than IQ1_S's own 1.5625 bits).
_L3_PARAMS, _L3_EMBED = 8_030_261_248, 128_256 * 4096  # Llama-3-8B: all parameters; embedding (= output) parameters


def _block_bits(t: str) -> float:
    emb, out = ROLE_TYPES[t]
    whole = _L3_PARAMS * GGUF_BPW[t]
    return (whole - _L3_EMBED * (TYPE_BITS[emb] + TYPE_BITS[out])) / (_L3_PARAMS - 2 * _L3_EMBED)


BLOCK_BITS = {t: _block_bits(t) for t in ROLE_TYPES}
# Gemma 4 E2B / E4B: the per-layer embedding table (and its projection) in an Ollama library GGUF (gemma4_ple.py) is
# taken F16 on the one figure there is: gemma4:e4b (Q4_K_M) 6.6 GiB on the CPU (ollama#15749). Ollama's quantizer
# (server/quantization.go llamaQuantizeArgs) passes --tensor-type ^per_layer_token_embd\.weight$=f16 for arch gemma3n
# only, and only for Q4_K_S / Q4_K_M; gemma4 gets no such override there, so the F16 reading is not that mechanism's
# and is kept to the same two file types (a q8_0 tag takes llama-quantize's rule). llama-quantize alone gives the table
# the token embedding's type (llama-quant.cpp llama_tensor_get_type: name == "token_embd.weight" ||
# name == "per_layer_token_embd.weight"): ple_as_embedding (a llama.cpp GGUF; unsloth's E4B Q8_0, 7.62 GiB, is
# q8_0 296 / bf16 1 / f32 423 tensors: no F16 table)
PLE_TYPE = "F16"
PLE_F16_TYPES = ("Q4_K_S", "Q4_K_M")
# Gemma 3's QAT GGUFs (google/gemma-3-*-it-qat-q4_0-gguf, and Ollama's gemma3:*-it-qat tags built from them) are
# Q4_0 blocks with the token embedding - the tied output - left in F16 ("The official QAT weights released by
# google use fp16 (instead of Q6_K) for the embeddings table": 27B 17.2 GB against 15.6 GB with a Q6_K table;
# Ollama's gemma3:12b-it-qat prints memory.weights.nonrepeating 1.9 GiB = 262144 x 3840 x 2 bytes, ollama#8430)
QAT_Q4_0 = "Q4_0_QAT"
ROLE_TYPES[QAT_Q4_0] = ("F16", "F16")
BLOCK_BITS[QAT_Q4_0] = BLOCK_BITS["Q4_0"]
# Ollama's mistral3 library builds of 0.6.x were quantized by its patched llama.cpp, whose mistral3 tensor map has no
# "output" entry (llama/patches/0021-add-model-quantizations): llama_tensor_get_type never recognises output.weight,
# which keeps the file type's base type, and takes token_embd for a tied output (Q6_K). mistral-small3.1:24b prints
# memory.weights.nonrepeating 360.0 MiB = 131072 x 5120 in Q4_K (ollama/ollama#10615); the Go quantizer of 0.7 on
# recognises the output again
MISTRAL3_PATCHED = "_MISTRAL3"
for _t, (_emb, _out) in list(ROLE_TYPES.items()):
    if _t.startswith(("Q2_K", "Q3_K", "Q4_K", "Q5_K")):
        ROLE_TYPES[_t + MISTRAL3_PATCHED] = (_out, _emb)
        BLOCK_BITS[_t + MISTRAL3_PATCHED] = BLOCK_BITS[_t]
# llama.cpp quantizes a K-quant tensor whose rows are not a multiple of 256 values with a fallback type
# (llama-quant.cpp, tensor cols not divisible by QK_K: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0). ffn_down's rows
# are `intermediate` long: Qwen2/2.5-72B's 29568 is not a multiple of 256, so its ffn_down (19.4 B parameters)
# takes the fallback. Extra bits per ffn_down weight, averaged over the file type's layer mix (Q4_K_M/Q5_K_M keep
# ffn_down in Q6_K on half of the layers, Q4_K_S in Q5_K on the first eighth).
K_FALLBACK_EXTRA = {"Q4_K_M": 0.5 * (8.5 - 6.5625) + 0.5 * (5.5 - 4.5), "Q4_K_S": (6.0 - 5.5) / 8 + 7 / 8 * (5.5 - 4.5),
                    "Q5_K_M": 0.5 * (8.5 - 6.5625) + 0.5 * (6.0 - 5.5), "Q5_K_S": 6.0 - 5.5, "Q6_K": 8.5 - 6.5625}


# The same check applies to every tensor (ne[0], its row length): rows of `hidden` values are those of attn_q/k/v and
# ffn_gate/up (and of the token embedding and the output head), attn_output's rows are heads x head_dim long. Those
# matmuls keep the file type's base type (attn_v the ffn_down mix above), so they gain the base type's fallback:
# Qwen2.5-0.5B's hidden 896 makes its Q4_K_M library build 235.8 MiB of blocks, not 205 (ollama#9031).
# llama-quant.cpp's fallback types (ollama's Go quantizer of 0.7+ has the Q4_K/Q5_K/Q6_K entries alone)
K_FALLBACK_TYPE = {"Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0", "Q2_K": "IQ4_NL", "Q3_K": "IQ4_NL",
                   "IQ4_XS": "IQ4_NL"}
# extra bits a value of the file type's base type (ROLE_TYPES' first) gains in its fallback type
K_FALLBACK_BASE_EXTRA = {t: TYPE_BITS[K_FALLBACK_TYPE[ROLE_TYPES[t][0]]] - TYPE_BITS[ROLE_TYPES[t][0]]
                         for t in K_FALLBACK_EXTRA}
# bartowski's "_L" GGUFs: the file type's blocks with the token embedding and the output in Q8_0 (his model cards:
# "Q6_K_L | Uses Q8_0 for embed and output weights"; Qwen3-32B Q6_K_L 27.26 GB against Q6_K 26.88 GB = the two
# 151936 x 5120 tables at 8.5 instead of 6.5625 bits). Not a llama.cpp file type (llama-quantize
# --token-embedding-type / --output-tensor-type q8_0); Q3_K_L is llama.cpp's own and not one of these, but his
# Q3_K_XL is ("Uses Q8_0 for embed and output weights": Q3_K_L blocks; bartowski/aya-expanse-32b-GGUF Q3_K_XL)
BARTOWSKI_L = {"Q6_K_L": "Q6_K", "Q3_K_XL": "Q3_K_L"}
for _t, _base in BARTOWSKI_L.items():
    ROLE_TYPES[_t], BLOCK_BITS[_t] = ("Q8_0", "Q8_0"), BLOCK_BITS[_base]  # its blocks' fallback: _k_fallback_bits


# llama-quant.cpp llama_tensor_get_type gives a fused attn_qkv.weight a type above the file type's base: Q4_K_M Q5_K,
# Q5_K_M Q6_K, Q3_K_M / Q3_K_L Q4_K. BLOCK_BITS (Llama 3's separate q/k/v) bills it at the average block rate: the
# difference, per weight, for the GGUFs whose blocks carry one: Phi-3/Phi-4 (attn_qkv {n_embd, n_embd + 2 n_embd_gqa})
# and Qwen 3.5+'s DeltaNet layers (attn_qkv {n_embd, key_dim x 2 + value_dim}, llama-model.cpp)
QKV_TYPE = {"Q4_K_M": "Q5_K", "Q5_K_M": "Q6_K", "Q3_K_M": "Q4_K", "Q3_K_L": "Q4_K", "Q3_K_XL": "Q4_K"}
FUSED_QKV_ARCHS = ("phi3",)
DELTANET_QKV_ARCHS = ("qwen3_5_text", "qwen3_5_moe_text")


# Ollama's own quantizer skipped every tensor whose name holds "v." as a vision tensor from March 2025 (6bd0a983c: its
# patched llama.cpp, `quantize &= name.find("v.") == npos`; 424810450, May 2025, the Go quantizer: `!Contains(name,
# "v.") || Contains(name, "_v.")`) to January 2026 (01cf7445f: HasPrefix "v."), and "attn_qkv.weight" holds it: a
# fused attn_qkv kept the converter's F16. Ollama 0.13.5 loading the library's phi4-reasoning:14b (Q4_K - Medium)
# prints 40 f16 tensors, one a layer by the type counts, and a 10.35 GiB file where Phi-4 at Q4_K_M is 8.4
# (Small-ed1/ContextHarbor ollama.log). The suffix marks an Ollama library build of that window (ollama_tags.py).
# Which tensors stayed F16, by the quantizer's history: 2025-03-14 to 2025-05-06 (llama.cpp's quantizer, patched) every
# weight with "v." in its name, attn_v.weight too (not modelled: no library build is known to carry it);
# 2025-05-06 to 2026-01-20 (the Go quantizer, "_v." exempt) attn_qkv alone; from 01cf7445f only the "v." vision tensors
OLLAMA_QKV_F16 = "_QKV16"
for _t in [t for t in ROLE_TYPES if not t.endswith(MISTRAL3_PATCHED)]:
    ROLE_TYPES[_t + OLLAMA_QKV_F16], BLOCK_BITS[_t + OLLAMA_QKV_F16] = ROLE_TYPES[_t], BLOCK_BITS[_t]
# The two suffixes name an Ollama library build's variant of a file type, which ollama_tags.py picks from the tag: no
# GGUF file type of that name exists, so a --weights-dtype or a GGUF repo tag naming one is refused (plan_checks.py)
LIBRARY_VARIANTS = (MISTRAL3_PATCHED, OLLAMA_QKV_F16)


def shown_type(name):
    """The file type a name of kv's own (an Ollama library build's Q4_K_M_MISTRAL3, Q4_K_M_QKV16; MXFP4_EXPERTS_F16)
    stands for, the name printed and given back in JSON (a user may not give the internal one: internal_name); any
    other name as is.
    The build's quirk, why its size differs from a plain file of that type, is in the tag's note (ollama_tags.py)."""
    up = str(name or "").upper()
    if up.startswith(MXFP4_EXPERTS):  # a 16/32-bit GGUF of gpt-oss (plan_weights.py): the type given (rev67f F7)
        return up[len(MXFP4_EXPERTS):] or "F16"
    return name[:-len(next(v for v in LIBRARY_VARIANTS if up.endswith(v)))] if up.endswith(LIBRARY_VARIANTS) else name


def internal_name(name) -> tuple | None:
    """Every name kv gives a weights type itself and no user may give: (what it names, the type to give instead), or
    None for any other name. An Ollama library build's variant (LIBRARY_VARIANTS, picked from the tag) and a 16/32-bit
    GGUF of an MXFP4 checkpoint (MXFP4_EXPERTS + the type, set by plan_weights.py for gpt-oss)."""
    up = str(name or "").strip().upper()
    if up.endswith(LIBRARY_VARIANTS):
        return ("an Ollama library build (picked from the Ollama tag)", up.rsplit("_", 1)[0],
                "the Ollama tag (phi4-reasoning:14b, mistral-small3.1:24b)")
    if up.startswith(MXFP4_EXPERTS):
        return ("a 16/32-bit GGUF of an MXFP4 checkpoint (picked for gpt-oss given F16, BF16 or F32)",
                up[len(MXFP4_EXPERTS):] or "F16", "the model (openai/gpt-oss-20b)")
    return None


def fused_qkv_params(spec: LLMSpec) -> int:
    """Weights of the blocks' attn_qkv.weight tensors (0 where q, k and v are separate tensors)."""
    if spec.arch in FUSED_QKV_ARCHS:
        return spec.n_layers * spec.hidden * (spec.n_heads + 2 * spec.n_kv_heads) * spec.head_dim_k
    if spec.arch in DELTANET_QKV_ARCHS and spec.linear_dims:
        kh, kd, vh, vd = spec.linear_dims[:4]
        return sum(k == LINEAR for k in spec.layer_kinds) * spec.hidden * (2 * kh * kd + vh * vd)
    return 0


def role_type(t: str, row: int) -> str:
    """The ggml type llama.cpp gives a tensor meant to be `t` whose rows are `row` values long."""
    return K_FALLBACK_TYPE.get(t, t) if row % 256 else t


def _k_fallback_bits(spec: LLMSpec, t: str, experts: bool = True) -> float:
    """Extra bits of the whole file from llama.cpp's K-quant fallback of the decoder matmuls whose rows are not a
    multiple of 256 (0 when they all divide it). ffn_down's rows are `intermediate` long; a routed expert's ffn_down
    (GGUF ffn_down_exps, rows of moe_intermediate values) follows the same ffn_down rules: DeepSeek-V2-Lite's 1408 is
    not a multiple of 256 (ollama#4799: 26 of its MoE blocks in Q4_K_S take 8764.11 MiB). attn_q/k/v and ffn_gate/up
    have rows of `hidden` values, attn_output of heads x head_dim (K_FALLBACK_BASE_EXTRA)."""
    t = BARTOWSKI_L.get(t, t)  # an "_L" file's blocks are its base type's
    if t not in K_FALLBACK_EXTRA:
        return 0.0
    extra = 0.0
    if spec.n_experts and experts:  # the routed experts' down projections: a third of the gated experts' matmuls
        if spec.moe_intermediate and spec.moe_intermediate % 256 and spec.expert_params:
            extra += spec.expert_params / 3 * K_FALLBACK_EXTRA[t]
    elif spec.intermediate and spec.intermediate % 256:
        extra += spec.n_layers * spec.intermediate * spec.hidden * K_FALLBACK_EXTRA[t]
    d, base = spec.hidden, K_FALLBACK_BASE_EXTRA[t]
    attn = sum(k in (FULL, SLIDING) for k in spec.layer_kinds) if not spec.mla else 0
    q, kv = spec.n_heads * spec.head_dim_k, spec.n_kv_heads * spec.head_dim_k
    if d % 256:
        extra += attn * d * (q * base + kv * base + kv * K_FALLBACK_EXTRA[t])
        extra += ((spec.expert_params * 2 / 3 if experts else 0) if spec.n_experts
                  else spec.n_layers * 2 * d * spec.intermediate) * base
    if q % 256:
        extra += attn * q * d * base
    return extra


# MXFP4 checkpoints (gpt-oss: quantization_config quant_method mxfp4, modules_to_not_convert = attention, router,
# embeddings, head) quantize the routed MoE experts alone, 4 bits + an e8m0 scale per 32 values = 4.25 bits; vLLM's
# Mxfp4Config likewise leaves every LinearBase unquantized. llama.cpp's "MXFP4 MoE" GGUF file type (ggml-org's
# gpt-oss GGUFs: 98 q8_0, 72 mxfp4, 289 f32 tensors for gpt-oss-20b) stores the other matmuls and both
# embeddings in Q8_0.
MXFP4_MOE = "MXFP4_MOE"
# Every GGUF of gpt-oss keeps its routed experts in MXFP4 whatever the file type: convert_hf_to_gguf writes the
# checkpoint's MXFP4 expert blocks as MXFP4 at any --outtype (gpt-oss-20b at bf16 is 13.8 GB, not 41), and
# llama-quantize refuses to requantize a quantized tensor without --allow-requantize ("requantizing from type %s is
# disabled"), so a K-quant name sets the other tensors' types only: unsloth/gpt-oss-20b-GGUF Q4_K_M is 10.81 GiB
# (MTL0_Mapped 11073.83 MiB, rabbit-holes gpt-oss-20b-GGUF notes), where Q4_K_M experts would make it 14.6 GiB
MXFP4_EXPERT_ARCHS = ("gpt_oss",)
# The same holds at a 16- or 32-bit --outtype: a GGUF labelled F16/BF16/F32 of gpt-oss (unsloth/gpt-oss-20b-GGUF
# gpt-oss-20b-F16.gguf, 12.83 GiB printed by llama.cpp, "5.27 BPW") is MXFP4 experts and everything else at that
# type; a GGUF runtime given such a type for it sizes the file as MXFP4_EXPERTS_ + the type (plan_weights.py), kv's own
# name, refused as a user's --weights-dtype (internal_name)
MXFP4_EXPERTS = "MXFP4_EXPERTS_"


def mxfp4_checkpoint(spec: LLMSpec) -> bool:
    """gpt-oss from its MXFP4 checkpoint, whatever GGUF type its name gives (quant BF16 from 'repo-GGUF:BF16')."""
    return spec.arch in MXFP4_EXPERT_ARCHS and "mxfp4" in (spec.quant, spec.checkpoint_quant)


def _odd_rows(spec: LLMSpec) -> str:
    rows = (spec.hidden, spec.n_heads * spec.head_dim_k, spec.moe_intermediate if spec.n_experts else spec.intermediate)
    return " and ".join(str(r) for r in dict.fromkeys(r for r in rows if r and r % 256))


# Unsloth's "Dynamic 2.0" GGUF quants (UD-Q4_K_XL, UD-Q8_K_XL, UD-IQ2_M, ...): a per-model selection of tensors kept
# at a higher type than the file type's, which is what general.file_type and llama-bench's label still name
UNSLOTH_DYNAMIC_GGUF = re.compile(r"ud[-_]")


def _mxfp4_split(spec, emb_params, q, per, how):
    """A file that keeps q expert params in MXFP4 (4.25 bits) and the rest, embeddings included, at `per` bytes."""
    emb = emb_params * per
    total = q * LINEAR_BITS["mxfp4"] / 8 + (spec.params - q) * per
    return {"embedding": int(emb), "output": int(emb), "blocks": int(total - emb * (1 if spec.tied else 2)),
            "total": int(total), "how": how}


# (batch 106, after first sight) exllamav3's EXL3 (turboderp-org/exllamav3 at 4f8ad01): each linear layer is a
# trellis whose last dimension is 16 x its own whole bits per weight (conversion/quant_config.py: bits_per_weight =
# shape[-1] // 16, listed per tensor in quantization_config.json's tensor_storage), beside its suh / svh sign vectors;
# the converter spreads a fractional target over the layers (conversion/allocation.py: base floor(bpw), then more
# bits where they help most) and writes the average to config.json's quantization_config "bits", the head's to
# "head_bits" (6 by default, convert_model.py). Neither is in the name 'exl3': kv does not guess them. (kv55) Nor is
# 'bits' a size: it is what the converter was asked for, and a tool that mixes widths writes what it likes - the four
# malaiwah Qwen3.8-27B EXL3 checkpoints (K4, K5K6, -hydrated, -context; their Hugging Face listings in that repo's
# receipts/chat-templates/raw) all say "bits": 4 over K4-K6 layers: sized from it the -context build is 14.60 GiB, its
# safetensors hold 19.25 GiB and vLLM printed 18.19. A checkpoint folder (--config DIR) is sized exactly from its
# safetensors index or headers (files.py), as any other format; what a fork changes at load is not in the files (the
# K5K6 and K4 builds keep attention in BF16 on disk, 28.47 / 26.37 GiB, that the fork re-quantizes at load,
# VLLM_EXL3_ONLINE_TRELLIS_BITS: 20.32 / 17.89 GiB resident by their model cards)
EXL3_REFUSAL = ("weights dtype {dt!r}: an EXL3 (exllamav3) checkpoint stores each layer at its own bits per weight "
                "(quantization_config.json tensor_storage bits_per_weight), which neither the name nor config.json's "
                "'bits' gives (a mixed build may say 4 over 5- and 6-bit layers): kv does not size it; give the "
                "checkpoint's folder with --config DIR (its safetensors sizes, exact) or its size with --weights-gib "
                "(its safetensors files together)")


def weights_by_role(spec: LLMSpec, weights_dtype: str | None = None, dense_experts: bool = False,
                    ple_as_embedding: bool = False) -> dict:
    """{'embedding', 'output', 'blocks', 'total', 'how'} in bytes. dense_experts: a linear format whose runtime
    builds the routed experts unquantized (SGLang's AWQConfig on ROCm: runtimes/sglang.awq_experts_dense).
    ple_as_embedding: a GGUF from llama-quantize, whose per-layer table takes the token embedding's type (PLE_TYPE)."""
    emb_params = spec.vocab * spec.hidden
    if weights_dtype is None and spec.weights_bytes:
        if spec.embed_bytes is not None:  # exact, from the GGUF tensor table
            emb, out = spec.embed_bytes, spec.output_bytes or 0
            ple = spec.ple_bytes or 0
        else:
            per = spec.weights_bytes / max(spec.params or 1, 1)
            emb = out = int(emb_params * per)
            ple = int(spec.ple_params * per)
        # Gemma 4's per-layer table: counted with the embedding (gemma4_ple.place), not spread over the blocks
        blocks = max(spec.weights_bytes - emb - ple - (0 if spec.tied else out), 0)
        return {"embedding": emb + ple, "output": out, "blocks": blocks, "total": spec.weights_bytes, "per_layer": ple,
                "how": spec.weights_source if spec.weights_source.startswith("as given") else f"exact, {spec.weights_source}"}
    dt = weights_dtype or spec.quant or spec.dtype
    if spec.params is None:
        raise UserError(f"{spec.name}: parameter count unknown, cannot size {dt} weights")
    low = FORMAT_ALIASES.get(str(dt).lower(), str(dt).lower())
    up = low.upper()
    qkv_f16 = up.endswith(OLLAMA_QKV_F16) and up[:-len(OLLAMA_QKV_F16)] in ROLE_TYPES
    if qkv_f16:  # the file type's mix but for a fused attn_qkv in F16 (OLLAMA_QKV_F16)
        up = up[:-len(OLLAMA_QKV_F16)]
        low = up.lower()
    if UNSLOTH_DYNAMIC_GGUF.match(low):
        raise UserError(f"{dt}: an Unsloth Dynamic GGUF keeps tensors it chose per model above its base type, and the "
                        "name does not say which (llama-bench labels Qwen3.6-27B-UD-Q8_K_XL 'Q8_0' at 33.31 GiB, where "
                        "Q8_0 throughout is 27 GiB): give the file with --gguf FILE, which reads every tensor's type, "
                        "or its size with --weights-gib (plan() takes the name alone as a range: unsloth.py)")
    head_params = 0 if spec.tied else emb_params
    ple_params = spec.ple_params  # Gemma 4's per-layer table: counted with the embedding (gemma4_ple.place)
    block_params = spec.params - emb_params - head_params - ple_params
    if up in ROLE_TYPES:
        et, ot = (role_type(x, spec.hidden) for x in ROLE_TYPES[up])
        pt = PLE_TYPE if not ple_as_embedding and up in PLE_F16_TYPES else ROLE_TYPES[up][0]  # rows of layers x 256: no K-quant fallback
        ple = ple_params * TYPE_BITS[pt] / 8
        emb = emb_params * TYPE_BITS[ot if spec.tied else et] / 8 + ple
        out = emb_params * TYPE_BITS[ot] / 8
        kept = spec.expert_params if mxfp4_checkpoint(spec) else 0
        extra = _k_fallback_bits(spec, up, experts=not kept)
        qkv_to = "F16" if qkv_f16 else QKV_TYPE.get(up)
        qkv = fused_qkv_params(spec) if qkv_to else 0
        qkv_extra = qkv * (TYPE_BITS[qkv_to] - BLOCK_BITS[up]) if qkv else 0
        blocks = ((block_params - kept) * BLOCK_BITS[up] + kept * LINEAR_BITS["mxfp4"] + extra + qkv_extra) / 8
        total = emb + blocks + (0 if spec.tied else out)
        how = ((f"{kept / 1e9:.2f} B expert params x 4.25 bits (MXFP4, as every gpt-oss GGUF keeps them) + " if kept else "")
               + f"{(block_params - kept) / 1e9:.2f} B block params x {BLOCK_BITS[up]:.2f} bits ({shown_type(up)}) + embedding "
               f"{'(tied, as output) ' if spec.tied else ''}{ot if spec.tied else et}" + ("" if spec.tied else f" + output {ot}")
               + (f" + per-layer table {ple_params / 1e9:.2f} B params {pt}" if ple_params else "")
               + (f"; attn_qkv {qkv / 1e9:.2f} B params {qkv_to} "
                  f"({'unquantized by Ollama’s quantizer of 2025' if qkv_f16 else 'llama-quant.cpp'})" if qkv else "")
               + (f"; rows of {_odd_rows(spec)} values are not a multiple of 256: llama.cpp's fallback type "
                  f"(+{extra / 8 / 2**30:.2f} GiB)" if extra else ""))
        return {"embedding": int(emb), "output": int(out), "blocks": int(blocks), "total": int(total), "how": how,
                "per_layer": int(ple)}
    if up.startswith(MXFP4_EXPERTS) and up[len(MXFP4_EXPERTS):].lower() in DENSE_BITS:
        rest = up[len(MXFP4_EXPERTS):]
        q = spec.expert_params
        return _mxfp4_split(spec, emb_params, q, DENSE_BITS[rest.lower()] / 8,
                            f"{q / 1e9:.2f} B expert params x 4.25 bits (MXFP4, as every gpt-oss GGUF keeps them) + "
                            f"{(spec.params - q) / 1e9:.2f} B in {rest} (a {rest} GGUF of an MXFP4 checkpoint)")
    if up == MXFP4_MOE:
        q = spec.expert_params or spec.linear_params or spec.params
        return _mxfp4_split(spec, emb_params, q, TYPE_BITS["Q8_0"] / 8,
                            f"{q / 1e9:.2f} B expert params x 4.25 bits (MXFP4) + {(spec.params - q) / 1e9:.2f} B in Q8_0 "
                            f"(llama.cpp's MXFP4 MoE file type)")
    if up in GGUF_BPW and low not in DENSE_BITS and not (low == "mxfp4" and spec.expert_params):
        total = spec.params * GGUF_BPW[up] / 8
        how = f"{spec.params / 1e9:.2f} B params x {GGUF_BPW[up]} bits ({up}, whole-file rate)"
    elif low in DENSE_BITS:
        total = spec.params * DENSE_BITS[low] / 8
        how = f"{spec.params / 1e9:.2f} B params x {DENSE_BITS[low]} bits"
    elif low in LINEAR_BITS:
        lin = spec.linear_params or spec.params
        experts_only = low == "experts_int8" or (low == "mxfp4" and bool(spec.expert_params))
        if experts_only:
            lin = min(spec.expert_params or 0, lin)
        dense = min(spec.expert_params or 0, lin) if dense_experts and not experts_only else 0
        lin -= dense
        group = spec.quant_group if low in GROUP_OVERHEAD_BITS else None
        own = (spec.quant_sym, spec.quant_bits) if low == spec.quant else (None, None)  # the config's own format
        bits = experts_int8_bits(spec) if low == "experts_int8" else linear_bits(low, group, *own)
        kept = min(skipped_linear_params(spec, experts_only), lin)
        lin -= kept
        total = lin * bits / 8 + (spec.params - lin) * 2
        how = (f"{lin / 1e9:.2f} B {'expert ' if experts_only else ''}matmul params x {bits:.2f} bits ({low}"
               + (f", groups of {group}" if group and group != DEFAULT_GROUP else "") + f") + "
               f"{(spec.params - lin) / 1e9:.2f} B at 16 bits"
               + (f" ({kept / 1e9:.2f} B of them decoder matmuls the checkpoint does not quantize)" if kept else "")
               + (f" ({dense / 1e9:.2f} B of them routed experts the runtime builds unquantized)" if dense else ""))
    elif low.startswith("exl3"):
        raise UserError(EXL3_REFUSAL.format(dt=dt))
    else:
        raise UserError(f"unknown weights dtype {dt!r} (fp32, bf16, fp16, fp8, int8, w8a8, w4a16, w4a8, awq, gptq, auto_round, "
                        f"experts_int8 or a GGUF "
                        f"type such as Q4_K_M)")
    per = total / spec.params
    emb = emb_params * per if low not in LINEAR_BITS else emb_params * 2
    ple = ple_params * per if low not in LINEAR_BITS else ple_params * 2
    return {"embedding": int(emb + ple), "output": int(emb), "blocks": int(total - emb * (1 if spec.tied else 2) - ple),
            "total": int(total), "how": how, "per_layer": int(ple)}


# llama.cpp's Q4_K_M / Q5_K_M (llama-quant.cpp, and Ollama's Go port) store ffn_down - experts included - in Q6_K
# on the blocks use_more_bits picks (the first and last eighth, and every third between): those blocks are larger;
# ffn_down is taken as a third of a block's parameters
MORE_BITS_BASE = {"Q4_K_M": 4.5, "Q5_K_M": 5.5}


def use_more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def layer_weights(spec: LLMSpec, blocks: float, fmt=None) -> list:
    """Each repeating block's bytes, summing to `blocks`: in proportion to its parameters (a MoE model's dense
    first blocks are a fraction of its expert blocks: DeepSeek-R1's 3 of 61) and, for Q4_K_M / Q5_K_M, to the
    Q6_K ffn_down of the blocks use_more_bits picks."""
    n = spec.n_layers
    p = spec.layer_params if spec.layer_params and len(spec.layer_params) == n else [1] * n
    base = MORE_BITS_BASE.get(str(fmt or "").upper())
    w = [x * (1 + ((6.5625 - base) / base / 3 if base and use_more_bits(i, n) else 0)) for i, x in enumerate(p)]
    total = sum(w) or 1
    return [blocks * x / total for x in w]


def weights(spec: LLMSpec, weights_dtype: str | None = None) -> tuple:
    """(bytes, how) - exact from the file unless a different dtype is asked for."""
    r = weights_by_role(spec, weights_dtype)
    return r["total"], r["how"]


def split_weights(spec: LLMSpec, weights_total: int, weights_dtype: str | None = None) -> tuple:
    """(token embedding, output head, repeating blocks) in bytes. llama.cpp keeps the embedding in host RAM and
    puts the output head (a copy of the embedding when tied) on the GPU with the last layer."""
    r = weights_by_role(spec, weights_dtype)
    if r["total"] != weights_total:  # a caller's own total: split it in the same proportions
        f = weights_total / max(r["total"], 1)
        return int(r["embedding"] * f), int(r["output"] * f), int(r["blocks"] * f)
    return r["embedding"], r["output"], r["blocks"]


# llama.cpp's --n-cpu-moe N / --cpu-moe (common/arg.cpp, ggml-org/llama.cpp#15077): a buffer-type override
# "blk\.<i>\.ffn_(up|down|gate)_exps=CPU" for each of the first N layers (--cpu-moe: "\.ffn_(up|down|gate)_exps" in
# every layer). The routed experts' matmuls (two where non-gated) move to host memory (a CPU_REPACK buffer where the
# type repacks); the shared experts (ffn_*_shexp), the router (ffn_gate_inp), attention and norms stay where -ngl puts
# them. Mainline's pattern also matches the experts' biases (gpt-oss: f32; ik_llama.cpp#841 keeps them on the GPU):
# counted from a GGUF's tensor table (expert_file_bytes), not by the type rules. Each expert tensor's type follows
# llama-quant.cpp's rule for its role: ffn_gate/up_exps at the file type's base type, ffn_down_exps likewise or Q6_K on
# use_more_bits' layers for Q4_K_M / Q5_K_M (as layer_weights takes it); a row not a multiple of 256 takes the K-quant
# fallback (role_type).
# the tensors llama.cpp's per-layer pattern matches (regex_search of "blk\.i\.ffn_(up|down|gate)_exps": the weights
# and, on mainline, the biases; ik_llama.cpp#841 matches ".weight" only)
EXPERT_TENSOR = re.compile(r"blk\.(\d+)\.ffn_(?:up|down|gate)_exps\.(weight|bias)$")
EXPERT_BASE_TYPE = {"Q8_0": "Q8_0", "Q6_K": "Q6_K", "Q5_K_M": "Q5_K", "Q4_K_M": "Q4_K", "Q4_0": "Q4_0"}


def moe_layer_flags(spec: LLMSpec) -> list:
    """Per decoder layer: does it hold routed experts. Refused where the model's dense and MoE layers are not told
    apart (a MoE model whose layers differ in size but whose config gave no per-layer MoE list)."""
    n = spec.n_layers
    if not spec.n_experts:
        raise UserError(f"--n-cpu-moe / --cpu-moe keep routed MoE experts on the CPU; {spec.name} has no routed experts")
    if spec.moe_layers:
        if len(spec.moe_layers) != n:
            raise UserError(f"{spec.name}: {len(spec.moe_layers)} MoE flags for {n} layers; cannot place its experts")
        return [bool(x) for x in spec.moe_layers]
    if spec.layer_params and len(set(spec.layer_params)) > 1:
        raise UserError(f"{spec.name}: its layers differ in size but which of them hold the routed experts is not known "
                        "(dense first layers, as DeepSeek's first_k_dense_replace): give its config.json with --config")
    return [True] * n


def expert_layer_bytes(spec: LLMSpec, fmt: str | None, biases: bool = True) -> list:
    """Bytes of each decoder layer's routed experts (ffn_gate/up/down_exps weights, 0 for a dense layer) at the
    file's own tensor types: what llama.cpp's --n-cpu-moe moves to host memory layer by layer. From a GGUF's tensor
    table when the file is sized as it is (its biases too unless biases=False: ik_llama.cpp); else by the type rules
    below (weights only)."""
    if (spec.expert_file_bytes and spec.weights_bytes and len(spec.expert_file_bytes) == spec.n_layers
            and (fmt is None or str(fmt).upper() == str(spec.quant or "").upper())):
        return [w + (b if biases else 0) for w, b in spec.expert_file_bytes]
    moe = moe_layer_flags(spec)
    n_moe = sum(moe)
    d, i_w = spec.hidden, spec.moe_intermediate
    per = spec.expert_params / n_moe if spec.expert_params and n_moe else spec.n_experts * 3 * d * i_w
    if not per:
        raise UserError(f"{spec.name}: the routed experts' size is not known (no moe_intermediate_size)")
    # gated experts have three matmuls (gate, up, down); non-gated ones (Nemotron-H's relu2) up and down only
    mats = 2 if spec.n_experts and d and i_w and round(per / (spec.n_experts * d * i_w)) == 2 else 3
    if fmt is None and not spec.quant and spec.weights_bytes and spec.params and not spec.expert_file_bytes:
        # a file known by its size alone (--weights-gib, an Unsloth Dynamic range's ends "X throughout"): its bits a
        # parameter, not the checkpoint's 16-bit dtype
        bpp = spec.weights_bytes * 8 / spec.params
        return [int(per * bpp / 8) if m else 0 for m in moe]
    t = str(fmt or spec.quant or spec.dtype)
    up, low = FORMAT_ALIASES.get(t.lower(), t.lower()).upper(), FORMAT_ALIASES.get(t.lower(), t.lower())
    mxfp4 = (mxfp4_checkpoint(spec) or up == MXFP4_MOE
             or up.startswith(MXFP4_EXPERTS) or low == "mxfp4")
    n, out = spec.n_layers, []
    for i, m in enumerate(moe):
        if not m:
            out.append(0)
            continue
        if mxfp4:
            bits = (LINEAR_BITS["mxfp4"],) * mats
        elif low in DENSE_BITS:
            bits = (DENSE_BITS[low],) * mats
        elif up in EXPERT_BASE_TYPE:
            base = EXPERT_BASE_TYPE[up]
            down = "Q6_K" if up in MORE_BITS_BASE and use_more_bits(i, n) else base
            gu = TYPE_BITS[role_type(base, d)]
            bits = (gu,) * (mats - 1) + (TYPE_BITS[role_type(down, i_w)] if i_w else TYPE_BITS[down],)
        else:
            raise UserError(f"--n-cpu-moe with a {t} file: kv does not know that file type's expert tensor types "
                            f"(it knows MXFP4, 16/32-bit and {', '.join(EXPERT_BASE_TYPE)}): give the file with --gguf FILE, "
                            "whose tensor table gives each expert tensor's bytes")
        out.append(int(per / mats * sum(bits) / 8))
    return out


def cpu_moe_bytes(spec: LLMSpec, fmt: str | None, n_cpu_moe: int, first: int = 0, biases: bool = True) -> int:
    """The routed experts --n-cpu-moe N keeps in host memory, of the layers from `first` (the first layer -ngl puts
    on the GPU) to N: a layer below `first` is on the CPU already, whole."""
    return sum(expert_layer_bytes(spec, fmt, biases)[first:max(first, min(n_cpu_moe, spec.n_layers))])
