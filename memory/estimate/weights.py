"""Weights as ComfyUI keeps them: which tensors it loads, in which dtype, and the cast copies it makes."""
import math
import re

from .headers import ST_BYTES, tensor_bytes

# keys a file carries that ComfyUI's model class has no parameter for (load_state_dict(strict=False) drops
# them): T5's encoder.embed_tokens.weight is a copy of shared.weight (comfy/text_encoders/t5.py keeps only
# `shared`)
DROPPED_IF = {"encoder.embed_tokens.weight": "shared.weight"}
# keys ComfyUI's text-encoder classes never load, whatever else the file holds: its LLM text encoders (Qwen2.5-VL,
# Qwen3, Mistral, Llama, Gemma in comfy/text_encoders/llama.py) build no output head (`self.lm_head` is commented
# out there; no other class under comfy/text_encoders defines one), so a file's lm_head.weight stays on disk.
# diffusers / transformers do build it (runner "diffusers" keeps it).
COMFY_TE_DROPPED = ("lm_head.weight",)
# ComfyUI-GGUF's text-encoder loader (city96/ComfyUI-GGUF loader.py gguf_clip_loader) dequantizes a quantized token
# embedding to fp16 on load ("Dequantizing token_embd.weight to prevent runtime OOM."): for LLM encoders (llama,
# qwen2vl, qwen3, gemma3...) when the vocabulary is >= 64 * 1024, for T5 only UMT5-XXL's 256384 x 4096. T5-XXL's
# 32128-token embedding stays quantized. Keys as the GGUF file names them or as converted.
GGUF_TE_EMBED_KEYS = ("token_embd.weight", "embed_tokens.weight", "shared.weight")
GGUF_TE_EMBED_MIN_VOCAB = 64 * 1024

# --weights-dtype: what the diffusion model's large float tensors become
WEIGHT_DTYPES = {"fp32": "F32", "bf16": "BF16", "fp16": "F16", "fp8": "F8_E4M3", "bnb-int8": "BNB_INT8", "bnb-nf4": "BNB_4BIT",
                 "gguf": "Q8_0", "q8_0": "Q8_0", "q4_k": "Q4_K", "q5_k": "Q5_K", "q6_k": "Q6_K", "q4_0": "Q4_0", "q3_k": "Q3_K",
                 "q2_k": "Q2_K"}
# bitsandbytes (diffusers' and transformers' BitsAndBytesConfig, load_in_8bit / load_in_4bit) swaps nn.Linear modules
# only (replace_with_bnb_linear): every Linear weight whatever its size, while conv kernels, embedding tables, norms and
# biases keep their dtype. A Linear weight is a 2-D `.weight`; these 2-D ones are embedding tables (nn.Embedding).
# A model class's _keep_in_fp32_modules (diffusers' Wan: time_embedder, norms) and llm_int8_skip_modules are not read.
BNB_TYPES = ("BNB_INT8", "BNB_4BIT")
EMBEDDING_KEYS = ("embed_tokens.weight", "embedding_table.weight", "shared.weight", "token_embd.weight", "wte.weight",
                  "tok_embeddings.weight")


def is_float(dtype):
    return dtype in ("F32", "F64", "F16", "BF16")


def dropped(table: dict) -> set:
    out = set()
    for key, twin in DROPPED_IF.items():
        for name in table:
            if name.endswith(key) and name[:-len(key)] + twin in table:
                out.add(name)
    return out


def gguf_embed_dequantized(table: dict) -> set:
    """The text encoder's token embedding that ComfyUI-GGUF dequantizes to fp16 on load (GGUF_TE_EMBED_*): a key
    ending in one of GGUF_TE_EMBED_KEYS, stored in a GGUF block type, with a vocabulary of at least 64K rows."""
    return {k for k, (dt, shape) in table.items()
            if k.endswith(GGUF_TE_EMBED_KEYS) and dt not in ST_BYTES and len(shape) == 2
            and max(shape) >= GGUF_TE_EMBED_MIN_VOCAB}


def resident_bytes(table: dict, cast_fp32=True, drop=(), gguf_te=False) -> int:
    """Bytes in VRAM once ComfyUI loads the table: keys its model class has no parameter for are dropped (DROPPED_IF,
    and any key ending in one of `drop`, e.g. COMFY_TE_DROPPED for a text encoder ComfyUI runs);
    32/64-bit float weights are cast to 16-bit (its unet/text-encoder/VAE dtype on a GPU with bf16/fp16)
    unless cast_fp32 is False; a GGUF text encoder's token embedding is held in fp16 when gguf_te (ComfyUI-GGUF's
    loader, gguf_embed_dequantized); everything else stays as stored."""
    n = 0
    skip = dropped(table) | {k for k in table if drop and k.endswith(tuple(drop))}
    f16 = gguf_embed_dequantized(table) if gguf_te else set()
    for name, (dt, shape) in table.items():
        if name in skip:
            continue
        if name in f16:
            n += math.prod(shape) * 2
        elif cast_fp32 and dt in ("F32", "F64"):
            n += math.prod(shape) * 2
        else:
            n += tensor_bytes(dt, shape)
    return n


def at_dtype_bytes(table: dict, nbytes: int) -> int:
    """Bytes of the table once every float tensor is cast to one dtype of `nbytes` per element (a VAE that ComfyUI
    moves to its vae_dtype, comfy/sd.py VAE.__init__ first_stage_model.to(vae_dtype)); other tensors as stored."""
    skip = dropped(table)
    return sum(math.prod(shape) * nbytes if is_float(dt) else tensor_bytes(dt, shape)
               for name, (dt, shape) in table.items() if name not in skip)


def dtype_mix(table: dict) -> dict:
    out = {}
    for dt, shape in table.values():
        out[dt] = out.get(dt, 0) + tensor_bytes(dt, shape)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def largest_cast(table: dict) -> int:
    """ComfyUI's manual cast (fp8, GGUF) makes a 16-bit copy of each weight as it is used: the largest one."""
    n = 0
    for dt, shape in table.values():
        if dt not in ST_BYTES or dt.startswith("F8"):
            n = max(n, math.prod(shape) * 2)
    return n


# an offloaded model's weights reach the device one layer at a time (ComfyUI lowvram casts each module's weight
# as it runs; diffusers group offload onloads each leaf): layers on the device at once, fit: the FLUX.1-dev and
# SDXL leaf-level group-offload rows of benchmarks/data/diffusion_measured.json (LTX-Video held out)
OFFLOAD_LAYERS = 1


_BLOCK = re.compile(r"^(.*?blocks)\.(\d+)\.")


def numbered_blocks(table: dict) -> list:
    """The model's longest list of numbered blocks (Wan: blocks.N.*; FLUX: single_blocks.N.*), as sub-tables in index
    order: what a block swap moves (ComfyUI-WanVideoWrapper's blocks_to_swap). [] when the keys number no blocks."""
    groups = {}
    for k, v in table.items():
        m = _BLOCK.match(k)
        if m:
            groups.setdefault(m.group(1), {}).setdefault(int(m.group(2)), {})[k] = v
    if not groups:
        return []
    best = max(groups.values(), key=len)
    return [best[i] for i in sorted(best)]


# a text encoder streamed block by block (text_encoders "stream"): LightX2V's T5 with cpu_offload
# (lightx2v/models/input_encoders/hf/wan/t5/model.py at 744661c0). T5OffloadBlocksWeights allocates one block buffer
# on the device (range(1)); T5Encoder.forward_with_offload copies each block's weights into it in turn and moves the
# token embedding, the position embedding and the final norm onto the device (self.token_embedding =
# self.token_embedding.to(AI_DEVICE)) and never back. wan_runner keeps its text encoder for the whole run unless
# lazy_load or unload_modules is set, so those weights stay under sampling and the decode.
_TE_BLOCK = re.compile(r"^(.*?\b(?:block|blocks|layers))\.(\d+)\.")


def streamed_bytes(table: dict, cast_fp32=True, drop=()) -> int:
    """What a text encoder streamed block by block keeps on the device: every tensor outside its numbered blocks
    (T5 block.N, LLM and CLIP layers.N) plus one block buffer, the size of its largest block."""
    groups, rest = {}, {}
    for k, v in table.items():
        m = _TE_BLOCK.match(k)
        if m:
            groups.setdefault(m.group(1), {}).setdefault(int(m.group(2)), {})[k] = v
        else:
            rest[k] = v
    if not groups:
        return resident_bytes(table, cast_fp32, drop)
    best = max(groups.values(), key=len)
    for g in groups.values():
        if g is not best:
            for b in g.values():
                rest.update(b)
    return resident_bytes(rest, cast_fp32, drop) + max(resident_bytes(b, cast_fp32, drop) for b in best.values())


def largest_layer(table: dict, skip=(), elem_bytes=None) -> int:
    """Bytes of the largest weight matrix (or conv kernel) as stored: what streams onto the device per layer. skip:
    keys that do not stream (offload_buffers: a buffer accelerate keeps on the device). elem_bytes: at that many bytes
    per element instead (a model the runner holds in another dtype than its file's)."""
    return max(((math.prod(shape) * elem_bytes if elem_bytes else tensor_bytes(dt, shape))
                for k, (dt, shape) in table.items() if len(shape) >= 2 and k not in skip), default=0)


# Tensors a checkpoint stores that diffusers' model class holds as a buffer, not a parameter, one row each:
# (key ending, the module that registers it). diffusers' enable_sequential_cpu_offload (pipeline_utils.py) calls
# accelerate's cpu_offload(model, device, offload_buffers=len(model._parameters) > 0): False for a pipeline's models,
# whose weights all sit in submodules. accelerate's AlignDevicesHook.init_hook then sets only the parameters to meta
# (named_module_tensors(include_buffers=False)) and moves every buffer of the module to the execution device once
# ("if not self.offload_buffers and self.execution_device is not None: for name, _ in module.named_buffers(...):
# set_module_tensor_to_device(module, name, self.execution_device)"); pre_forward / post_forward move parameters only.
# So these stay on the device from enable_sequential_cpu_offload on, under every model's phase, in the dtype the
# model was loaded in (from_pretrained's torch_dtype casts float buffers too).
# One row per buffer: (key ending, the keys beside it (same module prefix) whose rank marks the module that registers
# it as a buffer, that rank, the module). A key ending so without the mark is some other module's parameter.
SEQUENTIAL_RESIDENT_BUFFERS = (
    # diffusers PatchEmbed (SD3 / SD3.5 MMDiT; embeddings.py at 58eb52c): register_buffer("pos_embed", ...,
    # persistent=True) when pos_embed_max_size is set; SD3.5 Medium's 384 x 384 x 1536 table is 432 MiB in fp16, SD3.5
    # Large's 192 x 192 x 2432 171 MiB. The checkpoint names it pos_embed.pos_embed (diffusers), beside PatchEmbed's
    # Conv2d pos_embed.proj.weight, or pos_embed (ComfyUI / SAI) beside x_embedder.proj.weight, a Conv2d kernel too
    # (4-D). Not the nn.Parameter tables of the same name: AuraFlowPatchEmbed's pos_embed.pos_embed (its proj an
    # nn.Linear, 2-D) and Wan / SkyReels-V2 / ChronoEdit's condition_embedder.image_embedder.pos_embed (no proj
    # beside it): parameters, streamed as the rest
    ("pos_embed", ("proj.weight", "x_embedder.proj.weight"), 4, "diffusers PatchEmbed's pos_embed (SD3 / SD3.5)"),
)


def sequential_buffers(table: dict) -> set:
    """Keys of the table that diffusers holds as buffers (SEQUENTIAL_RESIDENT_BUFFERS): on the device for the whole
    run under enable_sequential_cpu_offload, never streamed."""
    out = set()
    for k in table:
        for end, marks, rank, _ in SEQUENTIAL_RESIDENT_BUFFERS:
            if not (k == end or k.endswith("." + end)):
                continue
            prefix = k[:len(k) - len(end)]  # the module path, "" or ending in "."
            if any(len(table.get(prefix + m, (None, ()))[1]) == rank for m in marks):
                out.add(k)
    return out


# Components a diffusers pipeline keeps on the device whatever its offload, one row each: (key that identifies the
# model, the pipeline attribute that excludes it). diffusers' pipeline_utils.py (read at 58eb52c): enable_model_cpu_offload
# and enable_sequential_cpu_offload both run "if name in self._exclude_from_cpu_offload: model.to(device)" for every
# component named there, with no hook, and maybe_free_model_hooks re-runs enable_model_cpu_offload, so such a model sits on
# the device under every phase of an offloaded run.
DIFFUSERS_EXCLUDED_FROM_OFFLOAD = (
    # StableDiffusionSafetyChecker (its concept embeddings: concept_embeds [17, 768], special_care_embeds [3, 768]);
    # StableDiffusionPipeline and its img2img / inpaint siblings set _exclude_from_cpu_offload = ["safety_checker"]
    ("concept_embeds", "StableDiffusionPipeline._exclude_from_cpu_offload ['safety_checker']"),
)


def diffusers_kept_on_device(table: dict) -> bool:
    """True for a model that diffusers' offload leaves on the device (DIFFUSERS_EXCLUDED_FROM_OFFLOAD)."""
    ends = tuple(end for end, _ in DIFFUSERS_EXCLUDED_FROM_OFFLOAD)
    return any(k == e or k.endswith("." + e) for k in table for e in ends)


def requant(table: dict, dtype: str, min_elems=4096) -> dict:
    """The table with its large float tensors stored as `dtype` (safetensors or GGUF type name)."""
    return {k: ((dtype if len(s) >= 2 and math.prod(s) >= min_elems and is_float(dt) else dt), s)
            for k, (dt, s) in table.items()}


def bnb_requant(table: dict, dtype: str) -> dict:
    """The table as bitsandbytes holds it (BNB_TYPES): its nn.Linear weights swapped, everything else as stored."""
    return {k: ((dtype if len(s) == 2 and k.endswith(".weight") and not k.endswith(EMBEDDING_KEYS) and is_float(dt) else dt), s)
            for k, (dt, s) in table.items()}


def weights_dtype(name: str) -> str:
    try:
        return WEIGHT_DTYPES[name.lower()]
    except KeyError:
        raise ValueError(f"weights dtype must be one of {', '.join(WEIGHT_DTYPES)}, not {name!r}") from None
