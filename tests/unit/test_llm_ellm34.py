"""Task ellm34 (kv-accuracy round 57, batch 63 after its first sight): llama.cpp's --mmproj file priced at the types
convert_hf_to_gguf.py stores (one-dimensional tensors and the vision position table in F32, the patch embedding in F32
in a BF16 file, the other matrices in 16 bits), and Qwen3.5 / 3.6's vision tower counted as Qwen3-VL's (llama.cpp's
converter registers Qwen3_5(Moe)ForConditionalGeneration on Qwen3VLVisionModel). Expected bytes are derived by hand
below, each checked against the clip 'model size' ghghang2/v1.6's logs print."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import mmproj as MP
from gpu_garden.memory.llm.runtimes import ollama as OL
from gpu_garden.memory.units import GiB, MiB

# Qwen3.6-35B-A3B's tower (Qwen3_5MoeVisionConfig: depth 27, hidden d 1152, ff 4304, patch 16, temporal 2,
# 2304 positions, merger 4d = 4608 -> out 2048, no deepstack):
#   matrices (BF16, 2 B): 27 x (qkv 3d^2 + proj d^2 + fc1 d ff + fc2 ff d) = 27 x 15,224,832 = 411,070,464
#                         + merger fc1 4608^2 = 21,233,664 + fc2 4608 x 2048 = 9,437,184  -> 441,741,312 x 2
#   F32 (4 B): blocks' biases and norms 27 x (3d + d + ff + d + 4d) = 27 x 14,672 = 396,144, patch bias 1152,
#              merger norm 2 x 1152, merger biases 4608 + 2048, position table 2304 x 1152 = 2,654,208
#              -> 3,060,464 x 4
#   patch embedding (F32 in a BF16 file): 2 x 3 x 16 x 16 x 1152 = 1,769,472 x 4
QWEN36_35B_MMPROJ = 441_741_312 * 2 + 3_060_464 * 4 + 1_769_472 * 4      # 902,802,368 B = 860.98 MiB printed
# Gemma-4-26B-A4B's tower (27 x 1152 / 4304, 16 heads x 72, patch 16, 2 x 10240 position rows, into 2816):
#   matrices: 27 x (4 x 1152 x 1152 + 3 x 1152 x 4304) = 544,942,080 + 1152 x 2816 = 3,244,032 -> 548,186,112 x 2
#   F32: 27 x 4 x 1152 norms = 124,416 + positions 2 x 10240 x 1152 = 23,592,960 -> 23,717,376 x 4
#   patch: 3 x 16 x 16 x 1152 = 884,736 x 4
GEMMA4_26B_MMPROJ = 548_186_112 * 2 + 23_717_376 * 4 + 884_736 * 4       # 1,194,780,672 B = 1139.43 MiB (1139.46)


def _plan(model, runtime, **kw):
    return llm.plan(llm.describe(model=model), runtime, ctx=65536, **kw)


def test_qwen35_tower_is_qwen3vl_and_mmproj_is_priced_at_stored_types():
    r = _plan("Qwen/Qwen3.6-35B-A3B", "llama.cpp", weights_dtype="Q4_K_M", mmproj=True, vram=94.97 * GiB)
    assert r["projector"]["weights"] == QWEN36_35B_MMPROJ
    assert abs(r["projector"]["weights"] / MiB - 860.98) < 0.01


def test_gemma4_mmproj_positions_and_norms_in_f32():
    r = _plan("google/gemma-4-26B-A4B-it", "llama.cpp", weights_dtype="Q4_K_M", mmproj=True, vram=94.97 * GiB)
    assert r["projector"]["weights"] == GEMMA4_26B_MMPROJ
    assert abs(r["projector"]["weights"] / MiB - 1139.46) < 0.05


def test_mmproj_file_types_table():
    """MMPROJ_ROWS: matrices 2 bytes, F32 tensors 4, the patch embedding 4 (a BF16 file): 5 x 2 + 3 x 4 + 2 x 4."""
    assert MP.file_bytes(10, 3, 2) == 30
    proj = OL.projector(llm.describe(model="Qwen/Qwen3.6-35B-A3B"))
    assert proj["gguf_bytes"] == QWEN36_35B_MMPROJ
