"""kv-accuracy round 71 (task ellm49, batch 76 after first sight)."""
import pytest

from gpu_garden.memory.llm import kv as llm

MiB = 1 << 20
VULKAN = "AMD Radeon 8060S Vulkan (RADV STRIX_HALO)"


# --- llama.cpp: qwen35moe's logits above the f32 mask copy on Vulkan -------------------------------------------------
# Qwen3.6-35B-A3B (qwen35moe): hidden 2048, vocab 248320; -ub 512, flash attention, one sequence. The reserve's logits
# for a whole ubatch (b9010, before OUTPUTS_MAX): 4 x 512 x (2048 + 248320) = 512,753,664 bytes = 489.00 MiB. The
# mask is n_kv x 512 f32 on the host, copied into the GPU's compute buffer as a split input (4 bytes an element):
#   34048 cells: 34048 x 512 x 4 = 66.50 MiB -> 555.50 MiB (printed 563.78 with q8_0 / q4_0, 576.52 with f16);
#   66816 cells: 130.50 MiB -> 619.50 (printed 627.78 q8_0 / q4_0, 640.52 f16);
#   132352 cells: 258.50 MiB -> 747.50 (printed 768.52 f16);
#   4096 cells: 8.00 MiB -> 497.00 (printed 498.00; kv had 489.00 at every context).
# hogeheer499-commits/strix-halo-guide, llama.cpp b9010 Vulkan on a Radeon 8060S (batches 66 and 76).
def _plan(model, ctx, gpu_name, kv_dtype="q8_0", version="b9010", parallel=1):
    return llm.plan(llm.describe(model=model), "llama.cpp", ctx=ctx, parallel=parallel, kv_dtype=kv_dtype,
                    weights_dtype="UD-Q4_K_M", vram=128 * (1 << 30), runtime_version=version, flash_attn="on",
                    ubatch=512, ngl=999, kv_unified=False, gpu_name=gpu_name)


def _compute(r):
    return r["overhead"]["compute_buffer"]


LOGITS = 4 * 512 * (2048 + 248320)


@pytest.mark.parametrize("ctx, mib", [(4096, 497.0), (34048, 555.5), (66816, 619.5), (132352, 747.5)])
def test_qwen35moe_vulkan_logits_sit_above_the_f32_mask_copy(ctx, mib):
    r = _plan("Qwen/Qwen3.6-35B-A3B", ctx, VULKAN, kv_dtype="f16" if ctx == 132352 else "q8_0")
    assert _compute(r) == LOGITS + 4 * ctx * 512
    assert _compute(r) / MiB == mib


def test_qwen35moe_vulkan_grows_4_bytes_a_mask_element():
    # the printed step: 627.78 - 563.78 = 64.00 MiB for 32768 more cells of 512 rows
    a, b = (_compute(_plan("Qwen/Qwen3.6-35B-A3B", c, VULKAN)) for c in (34048, 66816))
    assert b - a == 64 * MiB


def test_qwen35moe_mask_streams_split_the_cells():
    # -np 16 x 4096 cells, kv_unified false: 16 streams of 4096 x 32 rows = 4096 x 512 elements, as -np 1 x 4096
    r = _plan("Qwen/Qwen3.6-35B-A3B", 65536, VULKAN, kv_dtype="f16", parallel=16)
    assert _compute(r) / MiB == 497.0


@pytest.mark.parametrize("gpu_name", ["AMD Radeon 8060S", "NVIDIA RTX PRO 6000 Blackwell"])
def test_qwen35moe_off_vulkan_keeps_its_logits(gpu_name):
    # ROCm (Lemonade b1259: 497.00 at 4096 cells and at -np 16) and CUDA (493 at 64k, 804.02 at 262k) print no mask
    # under the logits
    assert _compute(_plan("Qwen/Qwen3.6-35B-A3B", 66816, gpu_name)) == LOGITS


def test_other_archs_on_vulkan_keep_their_logits():
    # Qwen3-Next-80B-A3B (qwen3next) on the same build prints 308.75 MiB at 34048 and 66816 cells: no mask under its
    # 300.75 MiB of logits (4 x 512 x (2048 + 151936))
    for ctx in (34048, 66816):
        r = _plan("Qwen/Qwen3-Next-80B-A3B-Instruct", ctx, VULKAN, kv_dtype="f16")
        assert _compute(r) == 4 * 512 * (2048 + 151936)


def test_qwen35moe_vulkan_with_outputs_max_keeps_its_rule():
    # from b9453 the reserve holds n_outputs_max rows of logits; the hole is not read there
    on, off = (_compute(_plan("Qwen/Qwen3.6-35B-A3B", 66816, g, version="b9849")) for g in (VULKAN, "AMD Radeon 8060S"))
    assert on == off
