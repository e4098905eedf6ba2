"""fix17 (review17 R1, R1b, R2): where PyTorch's message cut before what it holds (the cut_full row) may say "a script
without a traceback". Lines written from the runtimes' own formats (Python's traceback, ComfyUI's logging.info lines,
HF Trainer's log dict, tqdm's bar), numbers from PyTorch's message; no corpus text."""
import pytest

from support.triage_event import top


def _cut(req="64.00 MiB", total="23.54 GiB", free="18.44 MiB"):
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} of "
            f"which {free} is free.\n")


def _cut_row(ev):
    return any("cut before what PyTorch holds" in e for c in ev["causes"] for e in c["evidence"])


def test_the_bare_cut_message_still_takes_the_row():
    """The row itself stays: the cases below differ from this one by their context lines alone."""
    _, _, ev = top(_cut())
    assert _cut_row(ev), ev["causes"]


# R1: a traceback pasted without `line N` (a frame is still a frame) and ComfyUI's own lines (not a script)
FRAMES = '  File "comfy/ops.py", in cast_bias_weight\n    weight = weight.to(dtype=dtype)\n'
COMFY = ("got prompt\nRequested to load SDXLClipModel\n"
         "loaded completely; 21863.00 MB usable, 1560.80 MB loaded, full load: True\nRequested to load SDXL\n")


@pytest.mark.parametrize("text", [
    "Traceback (most recent call last):\n" + FRAMES + _cut(),      # header and frames without line numbers
    FRAMES + _cut(),                                                  # the frames alone
    COMFY + _cut(),                                                   # ComfyUI's loader lines, no banner, no traceback
], ids=["traceback-no-lineno", "frames-no-lineno", "comfy-loader-lines"])
def test_r1_a_traceback_or_comfyui_is_not_a_script_without_one(text):
    _, _, ev = top(text)
    assert not _cut_row(ev), ev["causes"]


# R1b: a run that trains or has finished steps was not stopped by its weights (the batch / resolution is the knob)
HF_TRAINER = "{'loss': 2.0113, 'grad_norm': 1.4712, 'learning_rate': 1.8e-05, 'epoch': 0.12}\n"
TQDM = " 12%|█▏        | 120/1000 [00:41<05:02,  2.91it/s]\n"
DIFFUSERS = "100%|██████████| 4/4 [00:02<00:00,  1.52it/s]\n 35%|███▌      | 7/20 [00:03<00:06,  2.10it/s]\n"
FILLER = "".join(f"INFO step timing {i} ok\n" for i in range(3000))


@pytest.mark.parametrize("text", [
    HF_TRAINER + _cut(),
    TQDM + _cut(),
    TQDM.replace("120/", "119/").replace("\n", "\r") + TQDM + _cut(),   # the bar redrawn over itself (\r), as a file keeps it
    DIFFUSERS + _cut(),
    HF_TRAINER + FILLER + _cut(),                      # the dict far above the failure
], ids=["hf-trainer-dict", "tqdm", "tqdm-cr", "diffusers-steps", "hf-trainer-far"])
def test_r1b_training_or_completed_steps_keep_the_row_off(text):
    _, _, ev = top(text)
    assert not _cut_row(ev), ev["causes"]


def test_r1b_a_bar_at_step_zero_has_run_nothing():
    """0/50: the loop had not finished a step, the message alone still reads as the cut row."""
    _, _, ev = top("  0%|          | 0/50 [00:00<?, ?it/s]\n" + _cut())
    assert _cut_row(ev), ev["causes"]


# R2: the free bound (SLIVER, 4 % of the card) decided by a case on each side. 400 MiB is 1.66 % of 23.54 GiB (under
# LAYER_SHARE); free stays under 2 GiB so the "driver refused" reading (4x the request and 2 GiB free) keeps out
@pytest.mark.parametrize("free, fires", [
    ("0.90 GiB", True),      # 3.8 % of the card: full (a 0.02 bound would miss it)
    ("1.00 GiB", False),     # 4.2 %: not a full card (a 0.08 bound would take it)
])
def test_r2_the_sliver_bound_decides_a_full_card(free, fires):
    _, _, ev = top(_cut("400.00 MiB", "23.54 GiB", free))
    assert _cut_row(ev) is fires, ev["causes"]
