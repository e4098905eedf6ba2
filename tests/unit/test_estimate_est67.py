"""est67: the estimate's open modelling items left by session 66 (review rev66d, issue 15), each derived by hand from
ComfyUI 0.8.0's source (comfy/model_management.py, comfy/sd.py, comfy/samplers.py)."""
from gpu_garden.memory.estimate import cfg_batch, comfy_load
from gpu_garden.memory.fit import plan as fit_plan

MiB, GiB = 1024 ** 2, 1024 ** 3


def _sample_est(device, weights, one_cond, reserve=400 * MiB, context=0):
    """The keys cfg_batch.free_at_sample reads: the sample phase's weights, ComfyUI's memory_required batched (two
    conds), the fixed costs and the --device."""
    return {"fixed": {"cuda_context": context, "comfyui_reserve": reserve}, "breakdown": {"sample": {"weights": weights}},
            "comfyui_memory_required": 2 * one_cond, "policy": {"device": device}}


def test_free_at_sample_follows_min_weight_memory_ratio_on_rocm():
    """rev66d #5. A 10 GiB card (no context), reserve 400 MiB, 3 GiB of weights, one cond's memory_required 8 GiB.
    load_models_gpu (model_management.py:625-630,695): minimum = max(819.2 MiB + 400, 8192 + 400) = 8592 MiB;
    lowvram_model_memory = max(0, 10240 - 8592, min(10240 x ratio, 10240 - 819.2 - 400)).
    NVIDIA (ratio 0.0, :315): max(1648, 0) = 1648 MiB of the 3072 kept -> free 10240 - 1648 = 8592 MiB.
    ROCm (ratio 0.4, :313): max(1648, min(4096, 9020.8)) = 4096 >= 3072: the weights load whole -> free 7168 MiB.
    The old code took the NVIDIA figure on every device (8592 MiB on ROCm too)."""
    budget = 10 * GiB
    assert cfg_batch.free_at_sample(_sample_est("cuda", 3 * GiB, 8 * GiB), budget) == 8592 * MiB
    assert cfg_batch.free_at_sample(_sample_est(None, 3 * GiB, 8 * GiB), budget) == 8592 * MiB
    assert cfg_batch.free_at_sample(_sample_est("rocm", 3 * GiB, 8 * GiB), budget) == 7168 * MiB
    assert cfg_batch.free_at_sample(_sample_est("xpu", 3 * GiB, 8 * GiB), budget) == 7168 * MiB
    # MPS runs in SHARED vram state (:415-416): the lowvram branch (:691) is not taken, so no ratio there
    assert cfg_batch.free_at_sample(_sample_est("mps", 3 * GiB, 8 * GiB), budget) == 8592 * MiB


def test_free_at_sample_whole_load_is_the_same_on_every_device():
    """Where the weights leave minimum_memory_required free, every device loads them whole: 16 GiB card, 5 GiB of
    weights, one cond 1 GiB: minimum max(1219.2, 1424) MiB; 16384 - 1424 = 14960 >= 5120 -> free 16384 - 5120 MiB."""
    for dev in ("cuda", "rocm"):
        assert cfg_batch.free_at_sample(_sample_est(dev, 5 * GiB, 1 * GiB), 16 * GiB) == 11264 * MiB


def test_fit_plan_keeps_its_names_from_the_one_copy():
    """fit/plan re-exports load_models_gpu's arithmetic from the estimate's module (one source): fit_guard and the
    tests read plan.MIN_WEIGHT_RATIO, plan.comfy_minimum and plan.comfy_weights_kept."""
    assert fit_plan.comfy_weights_kept is comfy_load.comfy_weights_kept
    assert fit_plan.comfy_minimum is comfy_load.comfy_minimum
    assert fit_plan.MIN_WEIGHT_RATIO == 0.0
    assert comfy_load.weight_ratio("rocm") == 0.4 and comfy_load.weight_ratio("cuda") == 0.0
