"""Published quantized checkpoints that leave decoder modules in 16 bits: their quantization_config's ignore list, as
read, so that the repo id - or the base model with --weights-dtype of that format, where the table names the one
published build - sizes what vLLM loads. Embeddings, the head, the vision tower and an MTP module on such a list are
16-bit in the plan already; only decoder matmuls change the figure (weights.skipped_linear_params)."""
import re


def _attention(spec) -> tuple:
    return tuple(f"model.layers.{i}.self_attn" for i in range(spec.n_layers))


def _deltanet(spec, parts) -> tuple:
    from .spec import LINEAR  # spec imports names, which imports this table
    return tuple(f"model.language_model.layers.{i}.linear_attn.{p}" for i, k in enumerate(spec.layer_kinds)
                 if k == LINEAR for p in parts)


_DELTANET_INPUTS = ("conv1d", "in_proj_a", "in_proj_b", "in_proj_qkv", "in_proj_z")


def _deltanet_inputs(spec) -> tuple:
    return _deltanet(spec, _DELTANET_INPUTS)


def _deltanet_all(spec) -> tuple:
    """(rev9 D6) _deltanet_inputs and each layer's out_proj, layer by layer (defined before CHECKPOINTS names it)"""
    return _deltanet(spec, _DELTANET_INPUTS + ("out_proj",))


# (built-in name, format, repo id pattern, the ignore list's decoder entries, what it keeps, the repo id of the one
# published build a base model in that format is taken as, or None)
CHECKPOINTS = (
    # NVIDIA's ModelOpt NVFP4 Gemma 4 (nvidia/Gemma-4-31B-IT-NVFP4) quantizes the MLP matmuls only: every
    # self-attention layer, the head and the vision tower stay bf16 (kenrollins/gemma-forge
    # docs/journal/gotchas/nvfp4-vram-math.md, quoting the config: 22 GB in VRAM, not 15.5)
    ("Gemma-4", "nvfp4", r"nvidia/", _attention,
     "NVIDIA's NVFP4 release keeps the attention layers in bf16 (ModelOpt, its quantization_config's ignore list)",
     None),
    # Inferact/Qwen3.8-27B-NVFP4 (ModelOpt NVFP4, the build vLLM's Qwen3.8-27B recipe names; 26,381,249,312 bytes):
    # quantization_config.ignore has 244 entries, every one of the 48 gated-DeltaNet layers' conv1d and
    # in_proj_{a,b,qkv,z}, plus lm_head, embed_tokens, visual and mtp; the 16 attention layers, the DeltaNet
    # out_proj and the MLPs are 4-bit (a third-party evaluation log that lists the config, found by exact-string
    # search, task ellm12)
    ("Qwen3.8-27B", "nvfp4", r"inferact/", _deltanet_inputs,
     "Inferact's NVFP4 build keeps every gated-DeltaNet layer's in_proj_qkv/z/a/b and conv1d in bf16 (its "
     "quantization_config.ignore)", "Inferact/Qwen3.8-27B-NVFP4"),
    # RedHatAI/Qwen3.6-35B-A3B-NVFP4 (compressed-tensors NVFP4, llm-compressor's build): llm-compressor's Qwen3.6-35B-A3B
    # NVFP4 recipe (examples/quantization_w4a4_fp4/qwen3_6_example.py, docs/key-models/qwen3.6/nvfp4-moe-example.md at
    # ab1ba3ef) ignores lm_head, visual, mlp.gate, embed_tokens, shared_expert_gate and "re:.*linear_attn.*" ("Gated
    # DeltaNet fused projections are incompatible with NVFP4"): every gated-DeltaNet layer's matmuls stay bf16, the
    # 10 attention layers, the routed and the shared experts are NVFP4 (batch 104, task ellm78). nvidia's ModelOpt
    # build of the same model quantizes otherwise, so a base model in nvfp4 is not taken as this one (build None)
    ("Qwen3.6-35B-A3B", "nvfp4", r"redhatai/", _deltanet_all,
     "Red Hat's NVFP4 build (llm-compressor's Qwen3.6 MoE recipe) keeps every gated-DeltaNet layer's projections in "
     "bf16 (ignore re:.*linear_attn.*)", None),
)


# Releases whose repo id the name parser does not read (an '-MTP' after the format reads as a drafter's word), each
# with what it keeps in 16 bits: (repo id in lower case, built-in name, format, the ignore list's decoder entries,
# note). AEON-7's Qwen3.6-27B ModelOpt NVFP4 "-Multimodal-NVFP4-MTP" (27 GB; served with --quantization modelopt)
# keeps every GatedDeltaNet linear_attn block in bf16, its projections (in_proj_qkv, in_proj_z, in_proj_a/b,
# out_proj) and conv1d, beside the vision tower and the grafted bf16 MTP head; its "-XS" sibling quantizes the
# projections and keeps conv1d alone (the release's README, AEON-7/Qwen3.6-27B-AEON-Ultimate-Uncensored-DFlash,
# task ellm61, batch 86)
RELEASES = (
    ("aeon-7/qwen3.6-27b-aeon-ultimate-uncensored-multimodal-nvfp4-mtp", "Qwen3.6-27B", "nvfp4", _deltanet_all,
     "AEON-7's Multimodal-NVFP4-MTP keeps every GatedDeltaNet layer's projections and conv1d in bf16 (its README)"),
)


def release(name: str) -> tuple | None:
    """(built-in, format, ignore-list entries, note) of a release RELEASES names by its repo id; None otherwise."""
    low = name.strip().lower()
    return next((r[1:] for r in RELEASES if r[0] == low), None)


# AutoRound builds whose block_name_to_quantize takes the MTP module, so that vLLM loads its layers' matmuls at the
# format's bits (runtimes/vllm_loader.mtp_bits): (built-in name, format, repo id pattern, the build a base model in that
# format is taken as). Lorbus/Qwen3.6-27B-int4-AutoRound lists the language model's layers and mtp
# (hotschmoe/b70_ai_things sglang/W4A8_PLAN.md) and keeps only mtp.fc bf16 (noonghunna/club-3090
# models/qwen3.6-27b/INTERNALS.md); its MTP is 0.28 GiB on disk (adrienbrault/qwen3.6-27b-rtx5090 README at 082f441).
# Not every AutoRound build does: syv-ai's Qwen3.8-27B-W4A16-AutoRound ships the module bf16, 850 MB
# (syv-ai/qwen38-27b-rtx3090 docs/optimizations.md), so a base model without an entry keeps it 16-bit.
MTP_QUANTIZED = (
    ("Qwen3.6-27B", "auto_round", r"lorbus/", "Lorbus/Qwen3.6-27B-int4-AutoRound"),
)


def mtp_build(spec, fmt: str) -> str | None:
    """The published build a base model sized in `fmt` is taken as where MTP_QUANTIZED names one (its MTP layers
    quantized), without a config stating block_name_to_quantize; None otherwise."""
    if spec.quant or spec.mtp_quant is not None:
        return None
    return next((build for b, f, _, build in MTP_QUANTIZED if spec.name == b and f == str(fmt).lower()), None)


def by_name(name: str, builtin: str, spec) -> None:
    """The checkpoint a repo id names: its ignore list, when the table has it and the config gave none."""
    low = name.strip().lower()
    for b, fmt, repo, _ in MTP_QUANTIZED:
        if builtin.startswith(b) and spec.quant == fmt and re.match(repo, low) and spec.mtp_quant is None:
            spec.mtp_quant = True
    for b, fmt, repo, entries, note, _ in CHECKPOINTS:
        if builtin.startswith(b) and spec.quant == fmt and re.match(repo, low) and not spec.quant_skip:
            spec.quant_skip = entries(spec)
            spec.notes.append(f"{name!r}: {note}")


def base_build(spec, fmt: str) -> tuple | None:
    """(ignore-list entries, note) of the one published build a base model sized in `fmt` is taken as, without a
    checkpoint named; None where the table names none."""
    for b, f, _, entries, note, build in CHECKPOINTS:
        if build and spec.name == b and f == str(fmt).lower() and not spec.quant_skip:
            return entries(spec), (f"{fmt} weights taken as the published build {build}: {note}; another build "
                                   "quantizes other modules - give its config.json with --config")
    return None
