"""fix67h: review rev67c's findings on the fix67b and tri87 merges (issue 14). Each test was run on the code before its
fix and failed there unless it says it is a regression check. Every test goes through the whole scan (engine.triage_text).

The logs under data/fix67h are the reviewer's, modelled on public threads (numbers exact, prose and paths rewritten);
data/fix67h/README.md names each one's thread.
"""
from pathlib import Path

from gpu_garden.memory.triage import engine

DATA = Path(__file__).resolve().parent / "data" / "fix67h"


def _answer(name):
    res = engine.triage_text((DATA / name).read_text(encoding="utf-8"))
    ev = res["events"][res["headline"]]
    return res, {c["id"]: c["confidence"] for c in ev["causes"]}


# --- F1: the tiny-card weights row stands aside in a training step, not for a training log line alone ----------------

def test_train_script_failing_in_model_to_device_reads_weights():
    """train.py fails in model.to(device) on a 1.96 GiB card: no step ran, the weights did not fit (was uncertain,
    weights-exceed-vram 57 %)."""
    res, conf = _answer("f1_train_to_device_2gib.log")
    assert res["cause"] == "weights-exceed-vram" and not res.get("uncertain"), conf
    assert conf["weights-exceed-vram"] >= 0.75, conf


def test_run_script_control_reads_weights():
    """Regression check: the same log with run.py (no training word) read weights-exceed-vram 80 % before and after."""
    res, conf = _answer("f1_ctrl_run_to_device_2gib.log")
    assert res["cause"] == "weights-exceed-vram" and conf["weights-exceed-vram"] >= 0.75, conf


def test_comfy_trainlora_loading_the_model_reads_weights_firmly():
    """ComfyUI's TrainLoraNode loads the whole model first (comfy_extras/nodes_train.py:991, load_models_gpu) on a
    512 MiB APU: no step ran (was weights-exceed-vram 74 %, now as without the training node)."""
    res, conf = _answer("f1b_comfy_trainlora_load_512m.log")
    assert res["cause"] == "weights-exceed-vram" and conf["weights-exceed-vram"] >= 0.8, conf


# --- F2: a text encoder's load takes the weights evidence only where the sampler is not loading the U-Net -------------

def test_stale_text_encoder_node_with_the_samplers_unet_load_does_not_read_text_encoder():
    """The report names CLIPTextEncode (a stale node id) but the stack is KSampler -> _prepare_sampling ->
    load_models_gpu: the U-Net's load (was text-encoder 56 % leading)."""
    res, conf = _answer("f3_stale_node_te_unet_load.log")
    assert max(conf, key=conf.get) == "weights-exceed-vram", conf
    assert conf.get("text-encoder", 0) < conf["weights-exceed-vram"], conf


def test_clip_last_requested_but_sampler_reloads_the_unet_reads_weights():
    """CLIP was the last "Requested to load"; the sampler's load_models_gpu of the already-listed U-Net prints no line
    (model_management.py:650-656) and fails in model_patcher.load (was text-encoder 47 % leading)."""
    res, conf = _answer("f4_clip_last_unet_reload.log")
    assert max(conf, key=conf.get) == "weights-exceed-vram", conf
    assert conf.get("text-encoder", 0) < 0.3, conf


def test_unet_last_requested_control_reads_weights():
    """Regression check: the U-Net's own "Requested to load" last, weights-exceed-vram 82 % before and after."""
    res, conf = _answer("f4_ctrl_unet_last.log")
    assert res["cause"] == "weights-exceed-vram" and conf["weights-exceed-vram"] >= 0.8, conf


# --- F3-F6: a wrapper's runs compare only with runs of the same shape, of this process, one prompt each --------------

def _leak_evidence(res):
    ev = res["events"][res["headline"]]
    return " ".join(str(c["evidence"]) for c in ev["causes"] if c["id"] == "leak")


def test_longer_videos_each_run_are_not_read_as_a_leak():
    """49 -> 81 -> 125 frames (Seq len 31200 / 50400 / 76800) with the same block swap: a longer video leaves more
    allocated; no growth is read across different sequence lengths (was leak 70 %)."""
    res, conf = _answer("f2_longer_video_runs.log")
    assert res["cause"] != "leak", conf
    assert "rose over" not in _leak_evidence(res)


def test_interrupted_run_between_does_not_merge_into_the_next():
    """A run that printed its summary and Seq len but never "Allocated memory" (interrupted) sits between two finished runs
    whose allocated figure rose 1.993 -> 3.981 GB: it ends at the next "got prompt" instead of merging into the next run
    (its summary doubled, no growth read: was uncertain, leak 58 %)."""
    res, conf = _answer("f9_interrupted_run_between.log")
    assert res["cause"] == "leak" and not res.get("uncertain"), conf
    assert "from 1.99 GiB to 3.98 GiB" in _leak_evidence(res)


def test_interrupted_run_ends_at_a_new_summary_block_without_got_prompt():
    """The same log with no "got prompt" lines (a log cut to the wrapper's own lines): the interrupted run ends where a
    new block swap summary follows its Seq len."""
    text = (DATA / "f9_interrupted_run_between.log").read_text(encoding="utf-8").replace("got prompt\n", "")
    res = engine.triage_text(text)
    assert res["cause"] == "leak" and "from 1.99 GiB to 3.98 GiB" in _leak_evidence(res), res["cause"]


def test_runs_before_a_comfyui_restart_are_not_compared():
    """ComfyUI-Manager's restart ("Restarting... [Legacy Mode]", os.execv in the same console, a fresh start banner)
    between run 1 (1.993 GB left) and run 2 (3.981 GB): the new process's one finished run says nothing of growth (was
    leak 70 % "rose over 2 runs"); one finished run of the same shape still leads with leak, below 70 %."""
    res, conf = _answer("f10_restart_between_runs.log")
    assert "rose over" not in _leak_evidence(res), _leak_evidence(res)
    assert conf.get("leak", 0) < 0.7, conf


# --- F5: BFC's backing off is not read as "the run went on" where an error line follows ------------------------------

def _says_went_on(res):
    ev = res["events"][res["headline"]]
    return any("the run went on" in str(c["evidence"]) for c in ev["causes"])


def test_backpedal_then_cudnn_handle_error_is_not_read_as_the_run_going_on():
    """TensorFlow's two refused regions (12238104064 then 11014293504 bytes, 0.9 each), then "Could not create cudnn
    handle: CUDNN_STATUS_INTERNAL_ERROR" and a segfault: the run did not go on (was other 61 %, "the run went on")."""
    res, conf = _answer("f5_tf_backpedal_then_cudnn.log")
    assert not _says_went_on(res), conf
    assert conf.get("other", 0) < 0.5, conf


def test_backpedal_then_convolution_algorithm_error_is_not_read_as_the_run_going_on():
    """The same tries, then TensorFlow's "Failed to get convolution algorithm" (cuDNN failed to initialize); checked with
    the stream executor's cuDNN line removed too, so this line alone stops the reading."""
    res, conf = _answer("f5b_tf_backpedal_then_convalgo.log")
    assert not _says_went_on(res), conf
    text = "\n".join(l for l in (DATA / "f5b_tf_backpedal_then_convalgo.log").read_text(encoding="utf-8").splitlines()
                     if "cuda_dnn.cc" not in l)
    assert not _says_went_on(engine.triage_text(text))


def test_backpedal_then_segfault_alone_is_not_read_as_the_run_going_on():
    """The first log with its cuDNN lines removed: a segfault after the tries is an error line too."""
    text = "\n".join(l for l in (DATA / "f5_tf_backpedal_then_cudnn.log").read_text(encoding="utf-8").splitlines()
                     if "cuda_dnn.cc" not in l)
    res = engine.triage_text(text)
    assert not _says_went_on(res)


# --- F8: tri87's x.until guard (no failure after the tries) -----------------------------------------------------------

def test_backpedal_tries_with_a_later_failure_are_not_read_as_the_run_going_on():
    """Three tries 0.9 apart (4046333952 -> 3641700352 -> 3277530112 bytes), then 399 training lines and BFC's own
    "ran out of memory" with a ResourceExhaustedError: far enough apart that the tries are a failure of their own, and a
    failure follows them, so they are not read as the run going on (with tri87's `x.until is not None` guard removed the
    tries' event reads other 61 %, "the run went on")."""
    lines = (DATA / "f8_chain_epoch_then_oom.log").read_text(encoding="utf-8").splitlines()
    text = "\n".join(lines[:3] + ["Epoch 1/10"] + [f"step {i} loss 2.3" for i in range(1, 400)] + lines[5:]) + "\n"
    res = engine.triage_text(text)
    assert len(res["events"]) == 2 and res["cause"] == "activations", res["cause"]
    tries = res["events"][0]
    assert not any("the run went on" in str(c["evidence"]) for c in tries["causes"]), tries["causes"]
    assert max(tries["causes"], key=lambda c: c["confidence"])["id"] != "other", tries["causes"]
