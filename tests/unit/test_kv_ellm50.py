"""kv-accuracy round 72 (task ellm50, batch 77 after first sight)."""
import json

import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import llamacpp as LC

MiB = 1 << 20
BIELIK = "speakleash/Bielik-11B-v3.0-Instruct"
PRO_VII = "AMD Radeon (TM) Pro VII"
BIELIK_ROW = "llamacpp-klimtech-bielik-11b-v3-q5km-provii-96k-np4-f16-fit28of51"
MALI_ROW = "llamacpp-armage-llama32-1b-q4km-mali-g715-vulkan-128k-np4-ngl0"


# --- llama.cpp: a first layer left on the CPU runs its attention on the GPU ------------------------------------------
# Bielik-11B-v3 (mistral): 50 full-attention layers, hidden 4096, 32 query heads x 128, 8 KV heads x 128. b7972 ROCm,
# -c 98304, -np 4 (kv_unified), -ub 512, flash attention on, f16 cache; the fit step placed 28 of 51 units (the output
# and the last 27 layers), so layers 0-22 are on the CPU. The ROCm0 compute buffer, 699.00 MiB printed:
#   the mask, 98304 x 512 elements: its f32 copy 192 MiB + its f16 cast 96 MiB      = 288 MiB (kv's figure before)
#   layer 0's K and V views copied in: 2 x 98304 cells x 1024 x 2 bytes             = 384 MiB
#   the layer's input and its Q, 512 x 4096 f32 each                                 =  16 MiB
#                                                                                    = 688 MiB (699.00 printed)
def _bielik(ngl, flash="on", gpu_name=PRO_VII, ubatch=512):
    return llm.plan(llm.describe(model=BIELIK), "llama.cpp", ctx=98304, parallel=4, kv_dtype="f16",
                    weights_dtype="Q5_K_M", vram=int(15.82 * (1 << 30)), runtime_version="b7972", flash_attn=flash,
                    ubatch=ubatch, ngl=ngl, kv_unified=True, gpu_name=gpu_name)


def _compute(r):
    return r["overhead"]["compute_buffer"]


MASK = 98304 * 512


def test_bielik_fit28_holds_layer0_k_and_v_beside_the_mask():
    assert _compute(_bielik(28)) == 6 * MASK + 2 * 98304 * 1024 * 2 + 4 * 512 * (4096 + 4096)
    assert _compute(_bielik(28)) / MiB == 688.0


def test_bielik_full_offload_keeps_the_mask_alone():
    # every layer on the GPU: the split input is the mask alone (its f32 copy and f16 cast), 288 MiB
    assert _compute(_bielik(51)) == 6 * MASK


def test_the_term_is_the_first_layers_cache_and_activations():
    spec = llm.describe(model=BIELIK)
    kvd = _bielik(28)["kv_detail"]
    s = {"flash": True, "ubatch": 512, "gpu_name": PRO_VII}
    assert LC.cpu_attention_inputs(spec, kvd, s, 23) == 400 * MiB
    assert LC.cpu_attention_inputs(spec, kvd, s, 0) == 0  # layer 0 on the GPU


def test_llama32_1b_ngl0_on_vulkan():
    # Llama-3.2-1B: 16 layers, hidden 2048, 32 heads x 64, 8 KV heads x 64; -ngl 0, -c 131072, -np 4 (unified), -ub 512,
    # flash attention (auto on Vulkan), b8319 on a Mali-G715: 256 + 128 of mask + 2 x 131072 x 512 x 2 (256) of layer
    # 0's K and V + 4 x 512 x (2048 + 2048) (8) = 648 MiB against 658.25 printed (kv had 460: the logits and the
    # output matrix's copy, op offload)
    r = llm.plan(llm.describe(model="meta-llama/Llama-3.2-1B-Instruct"), "llama.cpp", ctx=131072, parallel=4,
                 kv_dtype="f16", weights_dtype="Q4_K_M", vram=11 * (1 << 30), runtime_version="b8319",
                 flash_attn="on", ubatch=512, ngl=0, kv_unified=True, gpu_name="Arm Mali-G715 Vulkan")
    assert _compute(r) / MiB == 648.0


@pytest.mark.parametrize("kw", [dict(gpu_name="Apple M2 Ultra Metal"), dict(ubatch=16)])
def test_no_op_offload_no_term(kw):
    # Metal takes no op offload, nor does a ubatch under GGML_OP_OFFLOAD_MIN_BATCH (32): the layer stays on the CPU
    assert _compute(_bielik(28, **kw)) == _compute(_bielik(51, **kw))


def test_without_flash_attention_not_modelled():
    # the scores' split without flash attention was not read (no log prints it): the figure is the full offload's
    assert _compute(_bielik(28, flash="off")) == _compute(_bielik(51, flash="off"))


def test_a_hybrid_model_is_left_out():
    # Qwen3.5-9B's first layers are gated DeltaNet (their state, not K and V, would be the inputs): not modelled
    spec = llm.describe(model="Qwen/Qwen3.5-9B")
    kw = dict(ctx=8192, parallel=4, kv_dtype="f16", weights_dtype="Q4_K_M", vram=8 * (1 << 30),
              runtime_version="b7972", flash_attn="on", ubatch=512, kv_unified=True, gpu_name="NVIDIA GeForce RTX 3060")
    assert _compute(llm.plan(spec, "llama.cpp", ngl=31, **kw)) == _compute(llm.plan(spec, "llama.cpp", ngl=33, **kw))


# --- bench_llm: the rows as scored (the compute buffer at the layer count the runtime printed) ----------------------
def _rows():
    from support.pack import load_benchmark
    b = load_benchmark("bench_llm")
    return b, {r["id"]: r for r in json.loads(b.DATA.read_text())["rows"]}


def _score(row_id):
    b, rows = _rows()
    return b.score(rows[row_id])


def test_bielik_row_scores_compute_at_the_fit_steps_layers():
    # the fit step placed 28 of 51 units, no -ngl given: the compute buffer is compared at those 28, as the model buffer
    assert _score(BIELIK_ROW)["compute_mib"] == (688.0, 699.0)


def test_mali_row_scores_its_ngl0_compute():
    assert _score(MALI_ROW)["compute_mib"] == (648.0, 658.25)


# --- bench_llm: an Ollama 'kv cache' line's parts, each rounded ------------------------------------------------------
# Ollama prints each device's part of the cache with format.HumanBytes2 ("%.1f MiB"): the RX Vega qwen3.5:2b load at
# num_gpu 2 prints 'kv cache' Vulkan0 34.8 MiB and CPU 494.9 MiB, kv_mib their sum, 529.7. kv's cache is 529.641 MiB
# (the full-offload twin prints the total as one figure, 529.6): its parts, layers 22-23 on the GPU (one DeltaNet
# layer's state, 26.758 MiB, and one full-attention layer's 4096 cells x 2 x 512 x 2 bytes, 8 MiB), are 34.758 and
# 494.883, which print 34.8 and 494.9. The sum of two parts rounded to 0.1 is within 0.1 of the total.
NUMGPU2_ROWS = ("ollama-vegahbmx-qwen35-2b-q80-rxvega-vulkan-4k-numgpu2-segv",
                "ollama-vegahbmx-qwen35-2b-q80-rxvega-gfx900-rocm-4k-numgpu2")


@pytest.mark.parametrize("row_id", NUMGPU2_ROWS)
def test_a_sum_of_two_rounded_parts_is_exact_within_two_half_units(row_id):
    b, rows = _rows()
    from llm_score import kv_parts
    assert kv_parts(rows[row_id], "kv_mib", "MiB") == 2
    s = b.score(rows[row_id])
    assert s["kv"] == (529.641, 529.7, "MiB") and s["kv_exact"]


def test_one_printed_figure_keeps_half_a_unit():
    from llm_score import kv_exact, kv_parts
    _, rows = _rows()
    full = rows["ollama-vegahbmx-qwen35-2b-q80-rxvega-vulkan-4k-full-segv"]  # 'kv cache' device=Vulkan0 529.6 MiB
    assert kv_parts(full, "kv_mib", "MiB") == 1
    assert kv_exact(full, "kv_mib", 529.641, "MiB") and not kv_exact(full, "kv_mib", 529.7, "MiB")
    # parts that do not sum to the row's figure are not its parts
    other = dict(full, measured=dict(full["measured"], kv_mib=529.7),
                 notes=["'kv cache' Vulkan0 34.8 MiB and CPU 494.8 MiB"])
    assert kv_parts(other, "kv_mib", "MiB") == 1


def test_layer0_attention_goes_to_the_first_gpu_even_when_it_holds_no_layer():
    """Op offload hands layer 0's attention to the first GPU, as it hands it the output matmul's copy: with -ts 0,1 that
    card holds no layer but still gets the compute buffer for it (its term was dropped with the card's layers)."""
    def cards(ts):
        r = llm.plan(llm.describe(model=BIELIK), "llama.cpp", ctx=98304, parallel=4, kv_dtype="f16",
                     weights_dtype="Q5_K_M", vram=int(15.82 * (1 << 30)), runtime_version="b7972", flash_attn="on",
                     ubatch=512, ngl=28, kv_unified=True, gpu_name=PRO_VII, num_gpus=2, tensor_split=ts)
        return [(d["layers"], d["compute_buffer"] / MiB) for d in r["devices"]]

    assert cards([1, 1])[0][1] == 688.0 and cards([1, 1])[1][1] == 288.0
    # the empty first card: layer 0's attention with its inputs, the mask's f32 copy and f16 cast (288) + layer 0's K
    # and V (384) + its input and Q (16), as on one card; the second card keeps the mask alone for its layers
    assert cards([0, 1]) == [(0, 688.0), (27, 288.0)]

