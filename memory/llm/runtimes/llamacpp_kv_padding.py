"""ggml-cuda's padded rows in a quantized KV cache's buffer (ik_llama.cpp's 2-D K and MLA latent layout).

Split from llamacpp.py (its 600-line guard); llamacpp.py re-exports what it and plan.py read."""
from ..cache import KV_BYTES
from . import IK_K_2D_BUILD

QUANT_KV = ("q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl")

# ggml_backend_cuda_buffer_type_get_alloc_size pads every quantized tensor by one row of (MATRIX_ROW_PADDING - ne0 % 512)
# values, which ggml-alloc.c alloc_tensor_range rounds up to the buffer type's 128-byte alignment. ik_llama.cpp
# keeps each layer's K 2-D, head_dim x (heads x cells) (llama_kv_cache_init: ggml_new_tensor_2d(type_k, n_embd_head_k,
# n_head_kv*kv_size)), so a quantized K cache on CUDA/ROCm carries a padded row a layer in the device's KV buffer; V is 1-D
# and the "KV self size" line counts ggml_nbytes without it: Qwen3-235B-A22B, q8_0, 16384 cells: 48 x 17.0 MiB + 48 x 512 B
# (384 x 34/32 = 408 -> 512) = 816.02 MiB printed for CUDA0 (#370). The MLA latent is 2-D too, (kv_lora_rank + n_rot) x
# cells: 448 x 34/32 = 476 -> 512 B a q8_0 DeepSeek layer (#258). Mainline's shapes differ by version: not modelled.
MATRIX_ROW_PADDING = 512
CUDA_BUFFER_ALIGN = 128  # ggml-cuda's buffer type alignment, to which ggml-alloc rounds each tensor


def kv_buffer_pad(spec, kv: str, kv_v: str | None, cells: int, ik: bool, build: int | None = None,
                  mla_cache: str = "latent") -> int:
    """Bytes the CUDA buffer adds per layer to a quantized cache's tensors (ik_llama.cpp's layout; 0 otherwise).

    `build`: ik's build number (runtimes.ik_build; None, unknown: the newest layout). From IK_K_2D_BUILD each K tensor
    (and the MLA latent) is 2-D, one row a head (a token): ne0 is head_dim_k; before it, 1-D over every cell. (rev7 B4)
    --mla-cache full (ik -mla 0) keeps per-head K, nope + rope wide (192 in DeepSeek), 2-D as any K; its V is 1-D. The
    latent's transposed kv^T (-mla 1 without -fa) is 1-D, kv_lora_rank x cells = 512 x cells: never padded.
    (rev7 S4) ggml-alloc rounds the padded tensor, GGML_PAD(nbytes + pad, CUDA_BUFFER_ALIGN); that is nbytes + the pad
    rounded on its own whenever nbytes % CUDA_BUFFER_ALIGN == 0, which holds here: llama.cpp pads kv_size to 32 cells
    (256 with flash attention), so a 2-D K of head_dim 64 x m holds 32 x m x (bytes of 64 values) per head per 32 cells,
    a multiple of 128 for every quantized type (q8_0: 32 x 68 = 17 x 128), as is a 1-D V of 128 x m values a cell:
    the head dims modelled (64, 128, 192, 256, 576) are all such."""
    if not ik:
        return 0
    two_d = build is None or build >= IK_K_2D_BUILD
    if spec.mla and mla_cache == "full":
        k_dim, v_elems = (spec.mla_qk_nope or 128) + spec.qk_rope_head_dim, spec.n_heads * (spec.mla_v_head or 128)
        k_rows = spec.n_heads
    elif spec.mla:
        k_dim, v_elems, k_rows = spec.head_dim_k, 0, 1
    else:
        k_dim, v_elems, k_rows = spec.head_dim_k, spec.n_kv_heads * spec.head_dim_v, spec.n_kv_heads
    rows = ((k_dim if two_d else k_dim * k_rows * cells, kv),)
    if v_elems:
        rows += ((v_elems * cells, kv_v or kv),)  # V is 1-D
    pad = 0
    for ne0, t in rows:
        if t in QUANT_KV and ne0 % MATRIX_ROW_PADDING:
            pad += -(-(MATRIX_ROW_PADDING - ne0 % MATRIX_ROW_PADDING) * KV_BYTES[t] // CUDA_BUFFER_ALIGN) * CUDA_BUFFER_ALIGN
    return int(pad)
