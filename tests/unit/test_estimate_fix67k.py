"""fix67k: review rev67e's findings on the est67 merge (issue 15), each figure derived by hand from ComfyUI 0.8.0's
source (/work/hostenv/ComfyUI: comfy/model_management.py, comfy/sd.py) or from the recorder's own reading."""
from gpu_garden.nodes import estimate_measured

MiB, GiB = 1024 ** 2, 1024 ** 3


# -- F3: the "measured here" comparison counts the text encoders left loaded beside the sampler --------------------------

def test_formula_figure_counts_the_text_encoders_left_beside_the_sampler():
    """The recorder reads torch.cuda.max_memory_allocated after reset_peak_memory_stats (nodes/recorder_meter.py
    take_peaks) while the sampler runs: every live tensor, so the text encoders ComfyUI's text encode left on the card
    (model_management.py:621-707 unloads them only as far as the sampler's load asks) are in it. A sample phase of
    4096 MiB of weights, 1024 MiB of activations, 1536 MiB of text encoders kept, a 51.2 MiB margin, a 450 MiB context:
    peak_torch 4096 + 1024 + 1536 = 6656 MiB; peak_device adds the margin and the context: 6656 + 51.2 + 450 MiB.
    The old figure left the 1536 MiB out (5120 MiB)."""
    est = {"breakdown": {"sample": {"weights": 4096 * MiB, "activations": 1024 * MiB, "te_kept": 1536 * MiB,
                                    "allocator_margin": int(51.2 * MiB)}},
           "fixed": {"cuda_context": 450 * MiB}}
    assert estimate_measured.formula_figure(est, "peak_torch") == 6656 * MiB
    assert estimate_measured.formula_figure(est, "peak_device") == 6656 * MiB + int(51.2 * MiB) + 450 * MiB
    est["breakdown"]["sample"].pop("te_kept")  # an estimate without it (a cpu run, an older one) is as before
    assert estimate_measured.formula_figure(est, "peak_torch") == 5120 * MiB
