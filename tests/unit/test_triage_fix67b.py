"""fix67b: audit aud67b's ComfyUI reading findings (issue 14, classes 2, 5, 6, 8). Each test was run on the code before
its fix and failed there unless it says it is a regression check.

The logs under data/fix67b are the auditor's, modelled on public threads (numbers exact, prose and paths rewritten);
data/fix67b/README.md names each one's thread.
"""
import re
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine

DATA = Path(__file__).resolve().parent / "data" / "fix67b"


def _answer(name):
    res = engine.triage_text((DATA / name).read_text(encoding="utf-8"))
    ev = res["events"][res["headline"]]
    return res, {c["id"]: c["confidence"] for c in ev["causes"]}


# --- 1. (aud #3) the tiny-card row stands aside in a training step ---------------------------------------------------

def test_tiny_card_training_step_reads_activations():
    """loss.backward() on the stack of a 2 GiB card: the weights were placed and ran forward; the batch is what failed
    (was weights-exceed-vram 63 %, uncertain)."""
    res, conf = _answer("c5_2gib_training_batch.log")
    assert res["cause"] == "activations" and not res.get("uncertain"), (res["cause"], conf)
    assert "weights-exceed-vram" not in conf or conf["weights-exceed-vram"] < 20, conf


def test_tiny_card_training_bogus_free_leads_with_the_impossible_figure():
    """17179869183.96 GiB free on a 2 GiB card in a training step: the impossible figure leads (was weights 43 %)."""
    res, conf = _answer("c5_bogus_free_old_torch.log")
    assert res["cause"] == "other", (res["cause"], conf)
    assert "weights-exceed-vram" not in conf or conf["weights-exceed-vram"] < 20, conf


# --- 2. (aud #4) a wrapper's runs: what each left allocated grew with the same block swap summary ---------------------

def _evidence(res):
    ev = res["events"][res["headline"]]
    return " ".join(str(c["evidence"]) for c in ev["causes"] if c["id"] == "leak")


def test_blockswap_runs_allocated_growing_reads_leak():
    """WanVideoWrapper's "Allocated memory: memory=X GB" after each run (utils.print_memory: memory_allocated / 1024**3)
    rose 1.993 -> 3.981 with the same summary (1926.30MB on cuda:0), then step 0 of the next run failed (was uncertain,
    activations 49 % / leak 32 %)."""
    res, conf = _answer("c6_blockswap_lora_leak_growing.log")
    assert res["cause"] == "leak" and not res.get("uncertain"), conf
    assert "from 1.99 GiB to 3.98 GiB" in _evidence(res)


def test_blockswap_one_finished_run_of_the_same_shape_leads_with_leak():
    """One finished run with the same summary and Seq len, then step 0 fails: leak leads (was activations 49 %); no
    growth can be read from one run, so it stays below 70 %."""
    res, conf = _answer("c6_blockswap_lora_leak.log")
    assert max(conf, key=conf.get) == "leak", conf
    assert "same sequence length" in _evidence(res) and "rose" not in _evidence(res)


def _variant(old, new):
    text = (DATA / "c6_blockswap_lora_leak_growing.log").read_text(encoding="utf-8")
    assert old in text
    return engine.triage_text(text.replace(old, new))


def test_blockswap_growth_with_a_changed_summary_is_not_read():
    """More blocks on the card in the failing run (a smaller block swap): its allocated figure says nothing of a leak."""
    text = (DATA / "c6_blockswap_lora_leak_growing.log").read_text(encoding="utf-8")
    i = text.rindex("Transformer blocks on cuda:0: 1926.30MB")
    res = engine.triage_text(text[:i] + "Transformer blocks on cuda:0: 3852.60MB" + text[i + 39:])
    assert "rose" not in _evidence(res) and "same sequence length" not in _evidence(res)


def test_blockswap_allocated_falling_or_flat_is_not_growth():
    for new in ("memory=1.993 GB", "memory=1.500 GB", "memory=2.900 GB"):     # flat, lower, under 1 GiB above
        res = _variant("memory=3.981 GB", new)
        assert "rose" not in _evidence(res), new


# --- 3. (aud #6) a text encoder's load: the weight-loading evidence adds to text-encoder -------------------------------

def _node_only(node):
    """What the OOM panel hands triage for a node's failure (nodes/oom_build.build_report): the exception and the node."""
    text = "!!! Exception during processing !!! Allocation on device\nTraceback (most recent call last):\n" \
           "torch.OutOfMemoryError: Allocation on device"
    res = engine.triage_text(text, {"platform": "windows", "backend": "cuda", "cuda_malloc_async": True, "node_type": node})
    return res["events"][res["headline"]]["causes"][0]


@pytest.mark.parametrize("name, node", [
    ("c2_dualclipgguf_trace.log", "DualCLIPLoader"),          # "Requested to load FluxClipModel_", a convert() frame (was 65 %)
    ("c2_trace_wan_cliploader.log", "CLIPLoader"),            # WanTEModel "loaded partially" (was 65 %)
    ("c2_report_wanvideotextencode.log", "WanVideoTextEncode"),    # encoder.model.to(device) (was 52 %)
])
def test_text_encoder_load_full_log_is_at_least_as_sure_as_the_node_alone(name, node):
    res, conf = _answer(name)
    assert res["cause"] == "text-encoder" and not res.get("uncertain"), conf
    assert "weights-exceed-vram" not in conf, conf
    top = _node_only(node)
    assert top["id"] == "text-encoder" and conf["text-encoder"] >= top["confidence"], (conf, top)


def test_unet_weight_loading_frame_still_reads_weights():
    """Regression check (passes before and after): the same convert() frame under a diffusion model's load is the weights'."""
    text = (DATA / "c2_dualclipgguf_trace.log").read_text(encoding="utf-8")
    text = text.replace("Requested to load FluxClipModel_", "Requested to load Flux")
    text = text.replace('"D:\\SD\\ComfyUI\\nodes.py", line 65, in encode\n    output = clip.encode_from_tokens(tokens, return_pooled=True, return_dict=True)\n'
                        '  File "D:\\SD\\ComfyUI\\comfy\\sd.py", line 126, in encode_from_tokens\n    self.load_model()\n'
                        '  File "D:\\SD\\ComfyUI\\comfy\\sd.py", line 146, in load_model\n    model_management.load_model_gpu(self.patcher)\n',
                        '"D:\\SD\\ComfyUI\\nodes.py", line 1500, in sample\n    model_management.load_model_gpu(model)\n')
    assert "encode_from_tokens" not in text
    res = engine.triage_text(text)
    assert res["cause"] == "weights-exceed-vram", res["cause"]


# --- 4. (aud #9) pinned memory: ComfyUI's pin_memory() frame; a bar before a mid-run reload ---------------------------

def test_comfy_pin_memory_frame_reads_host_ram():
    """A bare "CUDA error: out of memory" raised from comfy/model_management.py pin_memory() (cudaHostRegister: ComfyUI
    0.8.0 model_management.py:1167 page-locks host RAM) with "Enabled pinned memory" (was host-ram 28 %, uncertain)."""
    res, conf = _answer("c8_pinned_gguf_bare.log")
    assert res["cause"] == "host-ram" and not res.get("uncertain"), conf
    ev = res["events"][res["headline"]]
    assert any("pin_memory()" in str(e) for c in ev["causes"] if c["id"] == "host-ram" for e in c["evidence"])


def test_pin_memory_of_another_program_is_not_comfyui_s():
    """Regression check (passes before and after): a pin_memory frame outside comfy/model_management.py (a DataLoader's)
    does not read as ComfyUI's pinning."""
    text = (DATA / "c8_pinned_gguf_bare.log").read_text(encoding="utf-8").replace(
        "D:\\ComfyUI\\comfy\\model_management.py", "D:\\venv\\Lib\\site-packages\\torch\\utils\\data\\_utils\\pin_memory.py")
    res = engine.triage_text(text)
    ev = res["events"][res["headline"]]
    assert not any("pin_memory()" in str(e) for c in ev["causes"] for e in c["evidence"])


def test_progress_before_a_mid_run_reload_counts_as_sampling_started():
    """Step 3/6, then "Requested to load WAN21" again (Dynamic VRAM re-stages the model) and the host buffer fails:
    sampling had started (was: "ComfyUI was loading WAN21 when it failed; sampling had not started"), host-ram stated."""
    res, conf = _answer("c8_hostbuffer_portable.log")
    ev = res["events"][res["headline"]]
    said = " ".join(str(e) for c in ev["causes"] for e in c["evidence"])
    assert "sampling had not started" not in said and "sampling WAN21 had started" in said, said
    assert res["cause"] == "host-ram" and not res.get("uncertain"), conf


def test_a_new_model_loaded_after_a_bar_is_still_a_load():
    """Regression check (passes before and after): the bar was another model's, then a different model loads and fails.
    (fix67h, rev67c F7) No "sampling ... had started" at all, whichever model it names: with window.py's
    scan.loads[-2] == last guard removed this fails ("sampling WanVAE had started"); the old assertion named WAN21 only."""
    text = (DATA / "c8_hostbuffer_portable.log").read_text(encoding="utf-8")
    i = text.rindex("Requested to load WAN21")
    res = engine.triage_text(text[:i] + "Requested to load WanVAE" + text[i + len("Requested to load WAN21"):])
    ev = res["events"][res["headline"]]
    said = " ".join(str(e) for c in ev["causes"] for e in c["evidence"])
    assert not re.search(r"sampling \S+ had started", said), said
