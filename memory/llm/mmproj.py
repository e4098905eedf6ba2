"""The vision projector file llama.cpp's --mmproj loads (kv-accuracy round 57): its bytes at the types
convert_hf_to_gguf.py stores, as clip.cpp's 'model size' line sums them, and Qwen3-VL's tower as that file holds it
(Qwen3.5 / 3.6 included: the converter registers Qwen3_5ForConditionalGeneration and
Qwen3_5MoeForConditionalGeneration on Qwen3VLVisionModel)."""

# vision_config model_types described as Qwen3-VL's tower (qwen3vl_tower), one row each: the one description of the
# tower every runtime prices (runtimes/ollama.py projector), each by its own storage rule (llama.cpp's file at
# MMPROJ_ROWS' types; vLLM, SGLang and Ollama's projector at 16 bits; kv-accuracy rounds 57 and 58).
#   qwen3_vl: transformers Qwen3VLVisionModel itself.
#   qwen3_5, qwen3_5_moe: llama.cpp's converter registers Qwen3_5(Moe)ForConditionalGeneration on Qwen3VLVisionModel;
#     vLLM's qwen3_5.py builds self.visual = Qwen3_VisionTransformer (qwen3_vl.py's tower) for both classes.
#   qwen3_vl_moe, qwen3_vl_moe_vision: Qwen3-VL-30B-A3B / 235B-A22B's vision_config as their config.json writes it
#     (transformers Qwen3VLMoeVisionConfig, a Qwen3VLVisionConfig with its own model_type; the later name
#     qwen3_vl_moe_vision); the bundled Qwen3-VL MoE files say qwen3_vl, a user's config.json says this (review29).
#   qwen3_5_vision: Qwen3.5's vision_config as transformers 5.x writes it (a Qwen3.5-2B merge's config.json, task vis36).
QWEN3VL_TOWERS = ("qwen3_vl", "qwen3_5", "qwen3_5_moe", "qwen3_5_vision", "qwen3_vl_moe", "qwen3_vl_moe_vision")
# vision_config model_types the generic ViT of runtimes/ollama.py projector() describes (biased q k v o and fc1 fc2, two
# LayerNorms, an (image / patch)^2 position table, a d x hidden projection), one row each; pixtral, gemma4_vision,
# mllama_vision_model, llama4_vision_model (llama4_tower), dots.ocr's (dots_tower, by the config's model_type dots_ocr:
# its vision_config names none) and QWEN3VL_TOWERS have their own branches. Any other family (or none named) is priced as this
# generic ViT too, and the plan says so (tower_note) rather than present it as that family's tower.
GENERIC_VIT_TOWERS = (
    ("clip_vision_model", "CLIP's ViT (LLaVA 1.5 / 1.6)"),
    ("siglip_vision_model", "SigLIP's ViT (Gemma 3)"),
)
QWEN3VL_POSITIONS = 2304  # num_position_embeddings when the config leaves it out (Qwen3_5VisionConfig's default)

# One row per stored type, bytes a value: one-dimensional tensors and *_norm.weight in F32 (prepare_tensors:
# n_dims <= 1), the vision position table V_ENC_EMBD_POS in F32 (its "always in float32" list), the patch embedding
# in F16 only for an F16 file and F32 otherwise (MmprojModel.tensor_force_quant: '.patch_embd.weight' in the name,
# which also matches Qwen3-VL's second temporal half '.patch_embd.weight.1'), every other matrix at the file's 16
# bits. The BF16 file (unsloth's mmproj-BF16) is the one priced; an F16 file is 2 bytes a patch value smaller.
MMPROJ_ROWS = (("matrix", 2), ("f32", 4), ("patch_embd", 4))


def file_bytes(params: int, f32: int, patch: int) -> int:
    """Bytes of the BF16 mmproj file: MMPROJ_ROWS' bytes a value for the matrices, the F32 tensors and the patch."""
    sizes = dict(MMPROJ_ROWS)
    return int((params - f32 - patch) * sizes["matrix"] + f32 * sizes["f32"] + patch * sizes["patch_embd"])


def qwen3vl_tower(v: dict, hidden: int, d: int, n: int, ff: int, patch: int) -> tuple:
    """(params, linear, f32, patch) of Qwen3-VL's tower (transformers Qwen3VLVisionModel): the generic ViT blocks
    (q k v o and fc1 fc2 biased, two LayerNorms), a Conv3d patch embedding over temporal_patch_size frames, a
    num_position_embeddings x hidden position table, and a patch merger (LayerNorm, linear_fc1 (4d -> 4d) and
    linear_fc2 (4d -> out_hidden_size), biased; 4d = hidden x spatial_merge_size^2) once for the output and once per
    deepstack_visual_indexes entry, those normed on the merged 4d: 27 x 1152 / 4304 with three deepstack mergers is
    0.595 B values (Qwen3-VL-32B). f32: the one-dimensional tensors and the position table."""
    per_layer = 4 * d * d + 4 * d + 2 * d * ff + d + ff + 4 * d
    m = d * int(v.get("spatial_merge_size") or 2) ** 2
    out_d = int(v.get("out_hidden_size") or hidden)
    deep = len(v.get("deepstack_visual_indexes") or ())
    merger = m * m + m + m * out_d + out_d
    patch_w = 3 * int(v.get("temporal_patch_size") or 2) * patch * patch * d
    pos = int(v.get("num_position_embeddings") or QWEN3VL_POSITIONS) * d
    params = n * per_layer + patch_w + d + pos + (1 + deep) * merger + 2 * d + deep * 2 * m
    linear = n * (4 * d * d + 2 * d * ff) + (1 + deep) * (m * m + m * out_d)
    f32 = n * (per_layer - 4 * d * d - 2 * d * ff) + d + pos + (1 + deep) * (m + out_d) + 2 * d + deep * 2 * m
    return params, linear, f32, patch_w


def llama4_tower(v: dict, hidden: int, d: int, n: int, ff: int, patch: int) -> tuple:
    """(params, linear) of the tower vLLM 0.20.2 builds for Llama 4 (models/mllama4.py, Llama4ForConditionalGeneration
    760-772: vision_model and multi_modal_projector, quant_config=None, so 16 bits under any checkpoint quantization):
    blocks of qkv and o (281-295, biased), fc1 / fc2 (353-360 through Llama4VisionMLP 132-146, biased) and two LayerNorms
    (363-364); the unfolded patch projection, bias-free (440); a class embedding and (image / patch)^2 + 1 positions
    (476-488); layernorm_pre / _post (491-492); the pixel-shuffle adapter's fc1 (intermediate_size -> projector_input_dim)
    and fc2 (-> projector_output_dim), biased only with multi_modal_projector_bias (220-228); linear_1
    (vision_output_dim -> the decoder's hidden size, bias-free, 168). Scout's 34 x 1408 / 5632 is 871.9 M values."""
    per_layer = 4 * d * d + 4 * d + 2 * d * ff + ff + d + 4 * d
    p_in = int(v.get("projector_input_dim") or 4096)
    p_out = int(v.get("projector_output_dim") or 4096)
    adapter = ff * p_in + p_in * p_out + (p_in + p_out if v.get("multi_modal_projector_bias") else 0)
    to_text = int(v.get("vision_output_dim") or p_out) * hidden
    positions = ((int(v.get("image_size") or 336) // patch) ** 2 + 1) * d
    params = (n * per_layer + int(v.get("num_channels") or 3) * patch * patch * d + d + positions + 4 * d + adapter
              + to_text)
    return params, n * (4 * d * d + 2 * d * ff) + ff * p_in + p_in * p_out + to_text


# dots.ocr's vision width when its vision_config gives no embed_dim (vLLM 0.20.2 transformers_utils/configs/dotsocr.py:14
# DotsVisionConfig embed_dim default; the config's hidden_size is the merger's output, a separate field)
DOTS_EMBED_DIM = 1536


def dots_tower(v: dict, n: int, ff: int, patch: int) -> tuple:
    """(params, linear) of dots.ocr's tower as vLLM 0.20.2 builds it (models/dots_ocr.py DotsOCRForCausalLM 664:
    DotsVisionTransformer): a biased Conv2d patch projection (397; conv.py Conv2dLayer bias default) and its RMSNorm
    (403); blocks of qkv and proj (247-261) and a SwiGLU fc13 / fc2 (334-347), all biased only with use_bias, and two
    RMSNorms (450, 456); post_trunk_norm with post_norm (518); the PatchMerger (177-212: a LayerNorm on the width, then
    4 x width -> 4 x width and -> hidden_size, both biased). dots.ocr's 42 x 1536 / 4224 is 1.262 B values."""
    e = int(v.get("embed_dim") or DOTS_EMBED_DIM)
    out = int(v.get("hidden_size") or e)
    bias = bool(v.get("use_bias"))
    per_layer = 4 * e * e + 3 * e * ff + (4 * e + 2 * ff + e if bias else 0) + 2 * e
    m = e * int(v.get("spatial_merge_size") or 2) ** 2
    merger = 2 * e + m * m + m + m * out + out
    params = (n * per_layer + int(v.get("num_channels") or 3) * patch * patch * e + e + e
              + (e if v.get("post_norm", True) else 0) + merger)
    return params, n * (4 * e * e + 3 * e * ff) + m * m + m * out


def tower_note(vision: dict, proj: dict) -> str | None:
    """A note when projector() priced a vision tower whose family it does not describe as the generic ViT."""
    kind = vision.get("model_type")
    if not proj.get("generic") or kind in dict(GENERIC_VIT_TOWERS):
        return None
    named = f"vision_config's model_type {str(kind)[:40]!r}" if kind else "a vision_config that names no model_type"
    return (f"vision tower: {named} is not a tower kv describes: its bytes here are a generic ViT's (as "
            f"{' and '.join(what for _, what in GENERIC_VIT_TOWERS)}) of the config's depth and widths, not read from "
            "that family's code")


def file_note(stored_types: bool) -> str:
    """Which mmproj file llama.cpp's --mmproj is priced as: kv has no input for the file's type."""
    return ("--mmproj: the projector is priced as a BF16 mmproj file (matrices 2 bytes a value, the F32 tensors and the "
            "patch embedding 4, as convert_hf_to_gguf stores them); an F16 file keeps its patch embedding in F16 (a little smaller), a "
            "Q8_0 or other quantized file its matrices in fewer bits: not priced, compare the projector line with "
            "the file's size" if stored_types else
            "--mmproj: the projector is priced at 2 bytes a value, an F16 / BF16 file (this tower's F32 tensors not "
            "split out); a Q8_0 or other quantized file stores its matrices in fewer bits: not priced, compare the "
            "projector line with the file's size")


def qwen25vl_tower(v: dict, hidden: int, d: int, n: int, ff: int, patch: int) -> tuple:
    """(params, linear) of Qwen2.5-VL's tower as vLLM builds it (vllm/model_executor/models/qwen2_5_vl.py at 002d181a,
    Qwen2_5_VisionTransformer): blocks of a biased qkv and proj (Qwen2_5_VisionAttention; RowParallelLinear's bias
    default), a SwiGLU gate_up / down, biased (Qwen2_5_VisionMLP, bias=True), two RMSNorms; a bias-free patch
    projection over temporal_patch_size frames (Qwen2_5_VisionPatchEmbed); rotary positions, no table; the patch merger
    (ln_q on the width, then 4d -> 4d and 4d -> out_hidden_size, biased). 32 x 1280 / 3456 into 3584 (Qwen2.5-VL-7B)
    is 0.681 B values, where the generic ViT's two MLP matrices gave 0.50 B."""
    per_layer = 4 * d * d + 4 * d + 3 * d * ff + 2 * ff + d + 2 * d
    m = d * int(v.get("spatial_merge_size") or 2) ** 2
    out_d = int(v.get("out_hidden_size") or hidden)
    patch_w = int(v.get("in_chans") or v.get("in_channels") or 3) * int(v.get("temporal_patch_size") or 2) * patch * patch * d
    params = n * per_layer + patch_w + d + m * m + m + m * out_d + out_d
    return params, n * (4 * d * d + 3 * d * ff) + m * m + m * out_d
