"""The weights `gpu-garden kv` sizes for a request (plan.py's steps): the file type a format names on the runtime
(weights_format), the weights by role with what the runtime adds at load (by_role), the vision tower, the
tensor-parallel share and LoRA slots (towers_and_shards), and vLLM's copies made for its kernels (vllm_load_extras)."""
from dataclasses import replace

from ..errors import UserError
from ..units import fmt_bytes
from . import checkpoints as CK, gemma4_ple as G4, mmproj as MP
from .runtimes import at_least, ollama as OL, parse_version, sglang as SG, vllm as V, vllm_drafter as VD, vllm_loader as VL
from .runtimes import vllm_activation as VA, vllm_mla as VM, vllm_rocm_fp8 as VRF
from .linear_quant import MARLIN_WIDTHS
from .weights import (DEFAULT_GROUP, DENSE_BITS, LINEAR_BITS, MXFP4_EXPERTS, MXFP4_MOE, SYM_DROPS_ZERO,
                      ZERO_BITS, mxfp4_checkpoint, skipped_linear_params, weights_by_role)


def weights_format(spec, runtime, weights_dtype, notes) -> tuple:
    """The weights' format, refused where the runtime has no such load (experts_int8), and llama.cpp's MXFP4 file;
    (format, weights_dtype)."""
    fmt = str(weights_dtype or spec.quant or "").lower()
    if fmt == "experts_int8" and (runtime in ("llama.cpp", "ollama", "sglang") or spec.quant):
        # vLLM's online method for a 16-bit checkpoint (review16b F2): GGUF runtimes take a GGUF type, and vLLM refuses a
        # --quantization other than the checkpoint's own quant_method (ModelConfig._verify_quantization). SGLang's
        # launch_server has no such choice (server_args.QUANTIZATION_CHOICES at sgl-project/sglang 001067ff; its
        # quantization/__init__ maps the name to vLLM's class, which --quantization cannot reach): review16c R9
        raise UserError("--weights-dtype experts_int8 is vLLM's --quantization experts_int8, which quantizes a 16-bit "
                        "checkpoint's routed experts at load: "
                        + (f"{runtime} loads a GGUF, give its type (e.g. Q8_0)" if runtime in ("llama.cpp", "ollama")
                           else "SGLang's --quantization has no experts_int8 (its online 8-bit method is fp8)" if runtime == "sglang"
                           else f"this checkpoint is already {spec.quant}"))
    if runtime in ("vllm", "sglang") and fmt == spec.quant:     # the checkpoint's own width (spec.quant_bits)
        VL.check_quant_width(fmt, spec.quant_bits, spec.name, runtime)
    # a GGUF named MXFP4 is llama.cpp's MXFP4 MoE file type (general.file_type 38, LLAMA_FTYPE_MOSTLY_MXFP4_MOE): a
    # llama.cpp run given --weights-dtype MXFP4 loads that file, as one given the MXFP4 checkpoint's name does
    if (runtime == "llama.cpp" and fmt == "mxfp4" and not spec.weights_bytes and spec.expert_params
            and not spec.ollama):  # an Ollama tag's blob keeps the bf16
        weights_dtype = MXFP4_MOE
        notes.append("MXFP4 checkpoint in llama.cpp: sized as its MXFP4 MoE GGUF (experts MXFP4, the other matmuls and "
                     "the embeddings Q8_0, as ggml-org's gpt-oss GGUFs); give --gguf for the exact file")
    # a 16/32-bit GGUF of gpt-oss keeps the checkpoint's MXFP4 experts (weights.py MXFP4_EXPERTS); a vLLM/SGLang bf16
    # is a dequantized checkpoint (unsloth/gpt-oss-20b-BF16), all 16-bit
    # (a GGUF repo's tag, unsloth/gpt-oss-120b-GGUF:BF16, sets quant: llama.cpp#15125 loads that file at 60.87 GiB)
    named = weights_dtype or (spec.quant if spec.gguf_tag or spec.quant != spec.checkpoint_quant else None)
    if ((runtime in ("llama.cpp", "ollama") or spec.gguf_tag) and fmt in DENSE_BITS and mxfp4_checkpoint(spec)
            and spec.expert_params and named and not spec.weights_bytes):
        weights_dtype = MXFP4_EXPERTS + str(named).upper()
    return fmt, weights_dtype


def by_role(spec, runtime, weights_dtype, fmt, tp, skip, knobs, notes) -> tuple:
    """The weights by role (weights.py) with what the checkpoint's build and the runtime's load add; (spec, roles,
    vLLM's entrypoint)."""
    build = CK.base_build(spec, weights_dtype) if weights_dtype and not spec.quant and skip is None else None
    if build:  # a base model in a format the table names one published build of (checkpoints.CHECKPOINTS)
        spec = replace(spec, quant_skip=build[0])
        notes.append(build[1])
    # a GGUF from llama-quantize, not an Ollama library blob (Gemma 4's per-layer table F16 there): who quantized the
    # file decides, not the runtime loading it (`ollama run hf.co/...:Q4_K_M` loads the uploader's llama-quantize file)
    roles = weights_by_role(spec, weights_dtype, ple_as_embedding=not spec.ollama)
    if (runtime == "sglang" and fmt == "awq" and spec.expert_params and SG.awq_experts_dense(knobs.get("gpu_name"))
            and not (spec.weights_bytes and weights_dtype is None)):
        roles = weights_by_role(spec, weights_dtype, dense_experts=True)
        notes.append(f"AWQ MoE on {knobs['gpu_name']}: SGLang has no AWQ-Marlin there, and its AWQConfig gives the "
                     "routed experts no method, so they are built in 16 bits (--quantization moe_wna16 quantizes them)")
    if spec.ple_params:  # Gemma 4 E2B / E4B: the per-layer table where the runtime keeps it
        from .gemma4_ple import place
        roles = place(spec, roles, runtime, parse_version(knobs.get("runtime_version"), runtime))
    if runtime == "vllm" and fmt == "mxfp4" and spec.expert_params and not (spec.weights_bytes and weights_dtype is None):
        extra, kernel = VL.mxfp4_expert_padding(spec, tp, knobs.get("gpu_name"), parse_version(knobs.get("runtime_version")))
        if extra:
            roles = dict(roles, total=roles["total"] + extra, blocks=roles["blocks"] + extra,
                         how=roles["how"] + f" + {fmt_bytes(extra)} of padding in vLLM's {kernel} expert layout")
            notes.append(f"MXFP4 experts: vLLM pads them for its {kernel} kernel (+{fmt_bytes(extra)}); "
                         + ("a B200-class GPU pads both sides to 256" if kernel == "trtllm" else
                            "vLLM's Triton backend on a Hopper card (from 0.14 here) rounds the intermediate size to 64 "
                            "and its swizzled layout holds the hidden side at a multiple of 256" if kernel == "triton" else
                            "on a GPU without native FP4 the intermediate size goes to a multiple of 128 and the hidden "
                            "size to 256"))
    if knobs.get("lm_head_dtype") is not None:
        roles = VL.quantized_head(spec, knobs["lm_head_dtype"], roles, notes)
    entry = str(knobs.get("vllm_entrypoint") or "serve").lower()
    if (runtime == "vllm" and fmt in V.BNB_FORMATS and not (spec.weights_bytes and weights_dtype is None)
            and entry != "unsloth"):
        q = max((spec.linear_params or spec.params or 0) - skipped_linear_params(spec), 0)
        extra = int(q * (VL.BNB_DEQUANT_BITS - LINEAR_BITS[fmt]) / 8)
        roles = dict(roles, total=roles["total"] + extra, blocks=roles["blocks"] + extra,
                     how=roles["how"] + f" + {fmt_bytes(extra)} of block scales vLLM dequantizes to fp32")
        notes.append(f"bitsandbytes: vLLM dequantizes the double-quantized block scales to fp32 at load (+{fmt_bytes(extra)}, "
                     "4.5 bits a weight); runs Unsloth starts keep them packed (--vllm-entrypoint unsloth)")
    width = spec.quant_bits or ZERO_BITS
    if (runtime == "vllm" and fmt == spec.quant and fmt in SYM_DROPS_ZERO and spec.quant_sym and width in MARLIN_WIDTHS
            and V.pre_ampere(knobs.get("gpu_name"))
            and not (spec.weights_bytes and weights_dtype is None and fmt == "gptq")):
        # below compute 8.0 no zero-free kernel runs (Marlin 8.0, Machete 9.0): ExllamaLinearKernel (uint4b8, uint8b128)
        # makes the zero tensor a symmetric checkpoint lacks (groups x out, packed at the weights' width) in
        # process_weights_after_loading. A GPTQ file's size already holds its qzeros; a symmetric compressed-tensors
        # file has no weight_zero_point
        q = max((spec.linear_params or spec.params or 0) - skipped_linear_params(spec), 0)
        extra = int(q * width / (spec.quant_group or DEFAULT_GROUP) / 8)
        roles = dict(roles, total=roles["total"] + extra, blocks=roles["blocks"] + extra,
                     how=roles["how"] + f" + {fmt_bytes(extra)} of {width}-bit zero points Exllama builds below compute 8.0")
    return spec, roles, entry


# How a runtime lays a vision tower over tensor-parallel GPUs, where it is not split like the decoder (every other
# tower's matmuls and tables are counted at 1/tp), one row per (runtime, vision_config model_type):
#   "whole": the tower on every GPU. vLLM's Gemma 4: its two vLLM 0.19 runs (TP 2 and TP 4 on L4s) leave the same
#     ~1.3 GiB a GPU outside the decoder's share, which a split 1.07 GiB tower would not (a reading of two logs).
#   "matmuls": the encoder blocks' q/k/v, o and gated-MLP matmuls split, the rest whole. SGLang's Gemma 4
#     (models/gemma4_vision.py: ClippableQKVParallelLinear, ClippableRowParallelLinear, ClippableGateUpParallelLinear
#     in every encoder layer; the patch embedder's nn.Linear and 2 x 10240 x hidden position table, the norms and
#     gemma4_mm.py's ReplicatedLinear projection into the decoder are not parallel layers). Until round 46 (task
#     ellm21b) SGLang took vLLM's row and, as that row adds the tower for vLLM only, counted no tower at all.
TOWER_TP_SPLIT = {("vllm", "gemma4_vision"): "whole", ("sglang", "gemma4_vision"): "matmuls"}
# DEEPSTACK_BUFFER: Qwen3VLForConditionalGeneration's __init__ (qwen3_vl.py, from vllm#24727 of 2025-09-16, before
# 0.11.0; the same at a65f93fb2) registers deepstack_input_embeds, one torch.zeros(max_num_batched_tokens,
# text_config.hidden_size) per deepstack_visual_indexes entry, in the model dtype on the GPU: built with the model, so
# inside "Model loading took", on every tensor-parallel rank whole; at 0.11.0 only where the tower is built (not in
# text-only mode). Rows 727 and 540 (the same Qwen3-VL-Embedding-2B at 0.11.0) load 4.3072 and 3.4554 GiB: the
# difference, 0.8518 GiB, is the 0.758 GiB tower and this buffer, 3 x 8192 x 2048 x 2 B = 0.094 GiB (task kv65).
# Runtimes that keep MLA's down-projections whole on every tensor-parallel GPU (vllm_loader.mla_replicated_params
# counts them; the rest of the layer is split), one row per runtime with the source read:
#   vllm: model_executor/models/deepseek_v2.py, fused_qkv_a_proj with disable_tp=True (kv_a_proj_with_mqa a
#     ReplicatedLinear without a q_lora_rank), and DSA's Indexer's ReplicatedLinear wq_b / wk / weights_proj
#   sglang: python/sglang/srt/models/deepseek_v2.py DeepseekV2AttentionMLA, "# For tensor parallel attention":
#     fused_qkv_a_proj_with_mqa = ReplicatedLinear(hidden, q_lora_rank + kv_lora_rank + qk_rope_head_dim) (and
#     kv_a_proj_with_mqa a ReplicatedLinear without a q_lora_rank), as several copies of the file agree (task fix21c).
#     Its DSA layout (index_head_dim fused into the same projection) was not read: DSA is refused on SGLang
MLA_DOWN_WHOLE = {"vllm": "deepseek_v2.py fused_qkv_a_proj disable_tp=True",
                  "sglang": "deepseek_v2.py fused_qkv_a_proj_with_mqa ReplicatedLinear"}


def towers_and_shards(spec, runtime, weights_dtype, fmt, tp, skip, entry, fp32, rank, loras, roles, knobs,
                      notes) -> tuple:
    """The vision tower or projector, one GPU's tensor-parallel share and vLLM's LoRA slots; (spec, roles, projector)."""
    proj = OL.projector(spec)
    if proj and MP.tower_note(spec.vision, proj) and (runtime != "llama.cpp" or knobs.get("mmproj")):
        notes.append(MP.tower_note(spec.vision, proj))  # a family projector() does not describe: said, not passed off
    split = TOWER_TP_SPLIT.get((runtime, (spec.vision or {}).get("model_type"))) if proj and tp > 1 else None
    if runtime == "vllm" and proj and tp > 1 and VA.mm_encoder_tp_mode(knobs.get("mm_encoder_tp_mode")) == "data" \
            and str((spec.vision or {}).get("model_type") or "") in VA.ENCODER_TP_TOWERS:
        split = "whole"  # --mm-encoder-tp-mode data: the tower unsplit on every GPU (ENCODER_TP_DATA)
    whole_tower = split == "whole"
    # bitsandbytes on load (a bf16 checkpoint, or one whose skip list is given) takes the tower's matmuls as well
    on_load = weights_dtype is not None and not spec.quant or skip is not None
    tower = (VL.bnb_tower(proj, spec.quant_skip, VL.BNB_DEQUANT_BITS if entry != "unsloth" else LINEAR_BITS[fmt])
             if runtime == "vllm" and fmt in V.BNB_FORMATS and on_load else None)
    if runtime in ("vllm", "sglang") and proj and not spec.weights_bytes and not whole_tower:
        # SGLang's multimodal models build their tower too (models/gemma3_mm.py, qwen2_5_vl.py: vision_tower/visual);
        # a tower whose encoder matmuls alone are split keeps the rest whole on every GPU (added after the share)
        added = tower or (2 * proj["linear"] if split == "matmuls" else proj["weights"])
        roles = dict(roles, total=roles["total"] + added, how=roles["how"] + f" + {fmt_bytes(added)} of vision tower")
        notes.append(f"vision tower counted with the weights "
                     + (f"({fmt_bytes(tower)}: vLLM quantizes its matmuls with bitsandbytes, the skip list does not "
                        "name it)" if tower else f"({fmt_bytes(proj['weights'])} in 16 bits): "
                        f"{'vLLM' if runtime == 'vllm' else 'SGLang'} loads it")
                     + ("; --language-model-only skips it (so does --limit-mm-per-prompt with image and video at 0: "
                        "interfaces.py _mark_tower_model, vLLM 0.20.2)" if runtime == "vllm" else ""))
    if runtime == "ollama" and proj:
        notes.append(f"vision projector: {fmt_bytes(proj['weights'])} of weights + {fmt_bytes(proj['graph'])} of graph "
                     f"for one image, on the GPU before any layer"
                     + (f" ({fmt_bytes(proj['graph_flash'])} with flash attention on Ollama's own engine, whose vision "
                        "attention runs flash_attn_ext then)" if proj.get("graph_flash") else ""))
    if tp > 1:  # one GPU's share: weights, KV heads, MLP columns (runtimes/vllm.py per_rank)
        table = roles["embedding"] if runtime == "sglang" and SG.token_table_whole(spec.arch) else 0
        roles = dict({k: roles[k] // tp for k in ("embedding", "output", "blocks", "total")},
                     how=roles["how"] + f", / {tp} GPUs")
        if table:  # SGLang's nn.Embedding token table: whole on every GPU (runtimes/sglang.py WHOLE_TOKEN_TABLE)
            roles = dict(roles, embedding=table, total=roles["total"] + table - table // tp,
                         how=roles["how"] + f" (the {fmt_bytes(table)} token table whole on each)")
            notes.append(f"SGLang builds this model's token table as a plain embedding, not split over the GPUs: "
                         f"{fmt_bytes(table)} on each")
        if runtime in MLA_DOWN_WHOLE and spec.mla and not spec.weights_bytes:
            quant, plain = VL.mla_replicated_params(spec)
            nbytes = 4 if fp32 else 2
            extra = int((quant * (LINEAR_BITS[fmt] / 8 if fmt in LINEAR_BITS else nbytes) + plain * nbytes)
                        * (tp - 1) / tp)
            roles = dict(roles, blocks=roles["blocks"] + extra, total=roles["total"] + extra,
                         how=roles["how"] + f" + {fmt_bytes(extra)} of MLA down-projections whole on every GPU")
        if spec.dsv4 and runtime == "vllm":  # DeepSeek-V4's replicated tensors whole on each GPU (deepseek_v4.py)
            extra = spec.dsv4["replicated"] * (tp - 1) // tp
            roles = dict(roles, blocks=roles["blocks"] + extra, total=roles["total"] + extra,
                         how=roles["how"] + f" + {fmt_bytes(extra)} of tensors whole on every GPU")
        spec = V.per_rank(spec, tp)
        if runtime == "vllm" and whole_tower and not spec.weights_bytes:
            roles = dict(roles, total=roles["total"] + proj["weights"])
            notes.append(f"vision tower counted whole on every GPU ({fmt_bytes(proj['weights'])} in 16 bits)")
        if split == "matmuls" and not spec.weights_bytes:
            rest = proj["weights"] - 2 * proj["linear"]
            roles = dict(roles, total=roles["total"] + rest)
            notes.append(f"vision tower: its encoder matmuls split over the {tp} GPUs "
                         f"({fmt_bytes(2 * proj['linear'] // tp)} a GPU), the patch embedder, position table, norms and "
                         f"projection whole on each ({fmt_bytes(rest)}), in 16 bits")
        notes.append(f"tensor parallel {tp}: every figure is one GPU's (1/{tp} of the weights, "
                     f"{spec.n_kv_heads} KV head{'s' if spec.n_kv_heads != 1 else ''} of the cache, the sampler over the "
                     "whole vocabulary); --vram is one GPU's")
    # the audio tower on vLLM only: SGLang's (gemma4_audio.py) and Ollama's are not counted, unread against a run
    # (docs/kv.md, Gemma 4's towers)
    if runtime == "vllm" and spec.audio and not spec.weights_bytes:  # after the share: whole on every GPU
        audio = G4.audio_tower_params(spec.audio, spec.hidden) * (4 if fp32 else 2)
        roles = dict(roles, total=roles["total"] + audio, how=roles["how"] + f" + {fmt_bytes(audio)} of audio tower")
        notes.append(f"audio tower counted with the weights ({fmt_bytes(audio)} in {32 if fp32 else 16} bits, its "
                     "embed_audio projection with it): vLLM's gemma4_mm.py builds it wherever the config has an "
                     "audio_config")
    if runtime == "vllm" and rank:
        lora = VL.lora_slot_bytes(spec, rank, loras, 4 if fp32 else 2)  # spec is one rank's already
        roles = dict(roles, total=roles["total"] + lora, how=roles["how"] + f" + {fmt_bytes(lora)} of LoRA slots")
        notes.append(f"LoRA: {loras} slot{'s' if loras > 1 else ''} of rank {rank} on every attention and MLP "
                     f"projection, allocated at load (+{fmt_bytes(lora)})"
                     + ("; Unsloth enables LoRA with its max_lora_rank, 64 unless given" if knobs.get("max_lora_rank")
                        is None else "")
                     + ("; MoE experts / MLA projections not counted" if spec.n_experts or spec.mla else ""))
    if runtime == "llama.cpp" and proj and proj.get("gguf_bytes"):  # --mmproj loads the file at its stored types
        proj = dict(proj, weights=proj["gguf_bytes"])
    if runtime == "llama.cpp" and proj and knobs.get("mmproj"):  # which file that price is (kv has no input for it)
        notes.append(MP.file_note(bool(proj.get("gguf_bytes"))))
    return spec, roles, proj


MROPE_TABLE_POSITIONS = 4      # MRotaryEmbedding's cache_max_position_num = max_position_embeddings * 4 (mrope.py)
MROPE_TABLE_FROM = (0, 7, 2)   # vllm bf3b79efb (Qwen2.5-VL, 2025-02-05) enlarged it; Qwen2-VL's table was 1 x before


def vllm_load_extras(spec, runtime, fmt, tp, fp32, s, roles, knobs, notes, whole=None) -> dict:
    """What vLLM's settings add to the weights: the MTP drafter, MLA's absorbed or dequantized matrices, ROCm's FP8 row
    padding (from `whole`, the model before per_rank's split), the rotary tables."""
    if knobs.get("mtp_tokens") is not None and runtime == "vllm":
        roles = VL.mtp_drafter(spec, knobs["mtp_tokens"], tp, 4 if fp32 else 2, roles, s, notes, fmt)
    if knobs.get("speculative_config") and runtime == "vllm":  # a separate drafter (plan_checks.speculative_config)
        if s.get("pp", 1) > 1:
            raise UserError("a separate drafter with pipeline parallelism: which stage holds its layers is not modelled")
        roles = VD.separate_drafter(spec, knobs["speculative_config"], tp, roles, s, notes,
                                    parse_version(knobs.get("runtime_version"), runtime))
    absorbed = VM.mla_absorbed_bytes(spec, s, fmt) if runtime == "vllm" else 0
    if absorbed:  # vLLM 0.7.x V0: absorbed MLA matrices next to the raw weights
        roles = dict(roles, total=roles["total"] + absorbed, blocks=roles["blocks"] + absorbed,
                     how=roles["how"] + f" + {fmt_bytes(absorbed)} of MLA matrices vLLM 0.7's V0 engine absorbs for decode")
    dequant = VM.mla_dequant_bytes(spec, s, fmt, spec.quant_skip) if runtime == "vllm" else 0
    if dequant:  # vLLM >= 0.8: a 16-bit copy of a quantized kv_b_proj for MLA's W_UK_T / W_UV
        roles = dict(roles, total=roles["total"] + dequant, blocks=roles["blocks"] + dequant,
                     how=roles["how"] + f" + {fmt_bytes(dequant)} of kv_b_proj MLA keeps dequantized to 16 bits")
    if runtime == "vllm" and spec.vllm_qkv_slots and not spec.weights_bytes:  # Gemma 4 (gemma4_ple.py)
        nbytes = 4 if fp32 else 2
        slots = int(spec.vllm_qkv_slots * (LINEAR_BITS[fmt] / 8 if fmt in LINEAR_BITS else nbytes)) // tp
        roles = dict(roles, total=roles["total"] + slots, blocks=roles["blocks"] + slots,
                     how=roles["how"] + f" + {fmt_bytes(slots)} of K / V slots vLLM's qkv_proj holds beyond the checkpoint")
        notes.append(f"vLLM builds every Gemma 4 layer's qkv_proj with a K and a V slot (KV-shared layers, "
                     f"attention_k_eq_v's V): {fmt_bytes(slots)} the checkpoint does not hold")
    if runtime == "vllm" and spec.ple_width and spec.arch.startswith("gemma4"):
        buf = s["max_batched"] * spec.n_layers * spec.ple_width * (4 if fp32 else 2)
        roles = dict(roles, total=roles["total"] + buf, ple_buffer=buf,
                     how=roles["how"] + f" + {fmt_bytes(buf)} of per_layer_embeddings buffer")
        notes.append(f"vLLM allocates Gemma 4's per_layer_embeddings with the model: max_num_batched_tokens "
                     f"{s['max_batched']} x {spec.n_layers} layers x {spec.ple_width} ({fmt_bytes(buf)})")
    levels = len((spec.vision or {}).get("deepstack_visual_indexes") or ()) if runtime == "vllm" else 0
    if levels:  # Qwen3-VL's deepstack buffer, built with the model where the tower is (DEEPSTACK_BUFFER)
        buf = levels * s["max_batched"] * spec.hidden * (4 if fp32 else 2)
        roles = dict(roles, total=roles["total"] + buf, deepstack_buffer=buf,
                     how=roles["how"] + f" + {fmt_bytes(buf)} of deepstack buffer")
        notes.append(f"vLLM allocates Qwen3-VL's deepstack_input_embeds with the model: {levels} levels x "
                     f"max_num_batched_tokens {s['max_batched']} x the decoder's {spec.hidden} ({fmt_bytes(buf)}, "
                     "inside 'Model loading took'; not where the tower is off)")
    rocm = V.on_rocm(knobs)
    layers = VRF.layer_padding(whole or spec, fmt, tp, rocm, s["version"]) if runtime == "vllm" else 0
    pad = sum(layers) if isinstance(layers, list) else layers
    if pad:  # ROCm's FP8 row padding (runtimes/vllm_rocm_fp8.py), kept in each linear's storage
        pp = s.get("pp", 1) or 1
        if pp > 1:  # each stage keeps its own layers' padding (vllm_pipeline.evaluate_pp places rocm_fp8_pad)
            from .runtimes.vllm_pipeline import pp_partition
            mine = sum(layers[:pp_partition(len(layers), pp, s.get("pp_partition"))[0]])
        else:
            mine = pad
        roles = dict(roles, total=roles["total"] + pad, blocks=roles["blocks"] + pad, rocm_fp8_pad=layers,
                     how=roles["how"] + f" + {fmt_bytes(mine)} of ROCm FP8 row padding")
        notes.append(f"vLLM on ROCm pads every linear weight of an FP8 checkpoint whose row is a multiple of 512 bytes by "
                     f"256 bytes a row (fp8_utils._maybe_pad_fp8_weight, VLLM_ROCM_FP8_PADDING=1 by default; vLLM's "
                     f"online --quantization fp8 does not pad): {fmt_bytes(mine)} "
                     + (f"on each of stage 0's GPUs (its layers; {fmt_bytes(pad)} over all {pp} stages)" if pp > 1
                        else "a GPU")
                     + f"; a server started with VLLM_ROCM_FP8_PADDING=0 holds that much less (kv has no switch for it)")
    elif pad is None:
        notes.append("vLLM on ROCm pads FP8 linear weights (VLLM_ROCM_FP8_PADDING); this model's layer kinds are not "
                     "enumerated for it, so that padding is not counted")
    elif runtime == "vllm" and VRF.unpadded_note(whole or spec, fmt, rocm, s["version"]):
        notes.append(VRF.unpadded_note(whole or spec, fmt, rocm, s["version"]))
    marlin = VL.marlin_fp8_block_scales(whole or spec, fmt, tp, knobs.get("gpu_name"), s["version"], rocm) if runtime == "vllm" else 0
    if marlin:  # block scales made group scales for Marlin on a card without FP8 arithmetic (runtimes/vllm_loader.py)
        roles = dict(roles, total=roles["total"] + marlin, blocks=roles["blocks"] + marlin,
                     how=roles["how"] + f" + {fmt_bytes(marlin)} of Marlin FP8 group scales")
        notes.append(f"FP8 on a card without FP8 arithmetic runs through vLLM's Marlin kernel, which turns a block-scaled "
                     f"checkpoint's 128 x 128 scales into one 16-bit scale per 128 inputs per row (+{fmt_bytes(marlin)} "
                     "a GPU, 1/64 of the FP8 weights; a per-tensor FP8 checkpoint would not add it)")
    if runtime == "vllm" and spec.dsv4:  # DeepSeek-V4's buffers built with the model (deepseek_v4.load_buffers)
        from .deepseek_v4 import load_buffers
        buf = load_buffers(spec, s["max_batched"], knobs.get("mtp_tokens") is not None, 4 if fp32 else 2)
        roles = dict(roles, total=roles["total"] + buf["total"], dsv4_buffers=buf["total"],
                     how=roles["how"] + f" + {fmt_bytes(buf['total'])} of buffers built with the model")
        notes.append(f"vLLM builds DeepSeek-V4 with {buf['rope_tables']} fp32 rotary table(s) ({fmt_bytes(buf['rope'])}), "
                     f"the MTP hidden-state buffer ({fmt_bytes(buf['mtp_hidden'])}) and the indexer's top-k buffer(s) "
                     f"({fmt_bytes(buf['topk'])}) on every GPU, inside 'Model loading took' (deepseek_v4.load_buffers)")
    rope = spec.rope_cache_elems * (4 if fp32 else 2) if runtime == "vllm" else 0  # tables in the model's dtype
    mrope = bool(rope) and spec.rope_mrope and (s["version"] is None or at_least(s["version"], *MROPE_TABLE_FROM))
    if mrope:  # MRotaryEmbedding tabulates max_position_embeddings x 4 (mrope.py: "a larger the cos and sin cache")
        rope *= MROPE_TABLE_POSITIONS
    if rope:  # the rotary tables are buffers of every GPU's model ("Model loading took" counts them)
        roles = dict(roles, total=roles["total"] + rope, rope=rope,
                     how=roles["how"] + f" + {fmt_bytes(rope)} of rotary cos/sin tables"
                     + (f" (vLLM's MRotaryEmbedding: {MROPE_TABLE_POSITIONS} x the positions)" if mrope else ""))
    return roles
