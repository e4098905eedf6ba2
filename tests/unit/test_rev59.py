"""Task rev59 (review of mend59/mend60, ux58, mend58): each test fails on the code before its fix (checked by reverting)."""
from gpu_garden.memory.fit import plan as fit_plan

GiB = 1 << 30


# Fit to Card's summary says what ComfyUI's loader keeps free (mend59). Off NVIDIA, ComfyUI 0.8.0's
# MIN_WEIGHT_MEMORY_RATIO is 0.4 (the node reads the live one) and load_models_gpu keeps
# max(0, free - minimum, min(free x 0.4, free - minimum_inference_memory())) of weights. 8 GiB free, no context, no
# reserve, memory_required 6 GiB, 6 GiB of weights: free - minimum = 8 - 6 = 2 GiB, the floor min(3.2, 7.2) = 3.2 GiB:
# int(0.4 x 8,589,934,592) = 3,435,973,836 B kept, so 8,589,934,592 - 3,435,973,836 = 5,153,960,756 B = 4.80 GiB stays
# free, not memory_required + reserve = 6.00 GiB (the old text). On NVIDIA (ratio 0) the text is as before.
def test_fit_summary_says_what_the_weight_floor_leaves_free():
    p = fit_plan.plan(8 * GiB, weights={"diffusion_model": 6 * GiB}, memory_required=6 * GiB, min_weight_ratio=0.4)
    assert (p["weights_on_gpu"], p["weights_offloaded"]) == (3_435_973_836, 6 * GiB - 3_435_973_836)
    assert "(ComfyUI's loader keeps 4.80 GiB free: less than 6.00 GiB, as MIN_WEIGHT_MEMORY_RATIO keeps those weights)" \
        in p["summary"]
    p = fit_plan.plan(8 * GiB, weights={"diffusion_model": 6 * GiB}, memory_required=6 * GiB)
    assert p["weights_on_gpu"] == 2 * GiB
    assert "offloaded 4.00 GiB (ComfyUI's loader keeps 6.00 GiB free: memory_required + reserve)" in p["summary"]
