"""llama.cpp's attention masks in the compute buffer: their elements at the reserve and the bytes one element takes
with flash attention (moved from llamacpp.py, fix22, unchanged)."""
from ..spec import FULL, SLIDING

# The attention mask under flash attention (llama-graph.cpp build_attn_inp_kv / build_attn_inp_kv_iswa, May 2025 to
# 2026): an f32 input of n_kv x n_tokens/n_stream x n_stream (n_kv the whole cache at the reserve; n_stream 1 when
# unified, else -np streams of -c/-np cells), cast to f16 for FLASH_ATTN_EXT. An input runs on the CPU backend
# (ggml_backend_sched_backend_id_from_cur "1.inp": the CPU compute buffer holds the f32 mask, Qwen3-Coder-Next 262k:
# "Host ... + 520" = 512 MiB + 8) and the cast on the GPU, so the GPU's buffer holds the f32 copy (a split input) and
# the f16 cast at once: 6 bytes a mask element (4 + 2; an iSWA model has a second mask over its window's cells).
# Without flash attention the f32 mask feeds the scores directly (the score term's 1 + n_head).
MASK_FLASH_BYTES = 4 + 2
# the f32 mask's GPU copy alone, where it sits under the logits (llamacpp.py mask_under_logits)
MASK_F32_BYTES = 4


def mask_elements(spec, kvd, ubatch: int, unified: bool, parallel: int) -> int:
    """Elements of the attention masks of the reserve graph (full layers' and the sliding window's)."""
    kinds = spec.layer_kinds
    n_kv = (kvd["cells"] if FULL in kinds else 0) + (kvd.get("sliding_cells", 0) if SLIDING in kinds else 0)
    return int(n_kv * ubatch // (1 if unified else max(parallel, 1)))
