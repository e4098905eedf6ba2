"""Measured beats modelled on the Footprint Estimate node (nodes/estimate_measured.py): which recorded runs
match (model files, latent size, each model's dtype), which node's peak is shown (the sampler's), what it is
compared with (peak_torch terms on CUDA, peak_device terms on MPS; a CPU-only host's RSS with nothing) and the difference.
Runs and expected figures are written out by hand."""
import types

import pytest

from gpu_garden.nodes import estimate_measured as M

GiB = 1024 ** 3
MiB = 1024 ** 2
CKPT = "SD1.5/v1-5-pruned-emaonly.safetensors"
SIZE = {"width": 512, "height": 512, "frames": 1, "batch": 1}
MODELS = [("SD15 (BaseModel)", "float16"), ("SD1ClipModel", "float16"), ("AutoencoderKL", "bfloat16")]
# the estimate's sample phase: weights 2 GiB + activations 1 GiB (peak_torch terms), margin 100 MiB, context 300 MiB
EST = {"breakdown": {"sample": {"weights": 2 * GiB, "activations": 1 * GiB, "allocator_margin": 100 * MiB, "fixed": 0}},
       "fixed": {"cuda_context": 300 * MiB, "comfyui_reserve": 400 * MiB}}


def run(pid, ended, sampler, decode=0, dev="cuda:0", files=(CKPT,), latent=SIZE, models=MODELS, status="success",
        sampler_type="KSampler"):
    return {"prompt_id": pid, "status": status, "ended": ended, "model_files": list(files), "latent": latent,
            "models": [{"name": n, "dtype": d} for n, d in models],
            "nodes": [{"id": "6", "type": "CLIPTextEncode", "peak": {dev: 1 * GiB}},
                      {"id": "3", "type": sampler_type, "peak": {dev: sampler}},
                      {"id": "8", "type": "VAEDecode", "peak": {dev: decode}}]}


def test_cuda_match_sampler_peak_against_peak_torch():
    runs = [
        run("new", 1767225600, int(3.3 * GiB), decode=5 * GiB),          # 2026-01-01T00:00:00Z, the newest match
        run("old", 1767139200, int(3.1 * GiB)),
        run("other-file", 1767225700, 9 * GiB, files=("flux1-dev.safetensors",)),
        run("other-size", 1767225700, 9 * GiB, latent={"width": 768, "height": 768, "frames": 1, "batch": 1}),
        run("fp32-vae", 1767225700, 9 * GiB, models=MODELS[:2] + [("AutoencoderKL", "float32")]),
        run("failed", 1767225700, 9 * GiB, status="error"),
        # a run whose list also holds a model left loaded from before still matches
        run("extra-model", 1767000000, int(3.2 * GiB), models=MODELS + [("Flux (Flux)", "bfloat16")]),
    ]
    m = M.measured_for(runs, ["v1-5-pruned-emaonly.safetensors"], SIZE, MODELS, EST)
    assert m == {"label": "measured here", "peak": int(3.3 * GiB), "compare_to": "peak_torch", "device": "cuda:0",
                 "phase": "sample", "run": "new", "when": "2026-01-01T00:00:00+00:00", "node": "KSampler",
                 "formula": 3 * GiB, "diff_pct": 10.0, "runs": 3}


def test_dtype_size_or_files_differ_no_measured():
    runs = [run("a", 1767225600, 3 * GiB)]
    assert M.measured_for(runs, [CKPT], SIZE, [("SD15 (BaseModel)", "float32")] + MODELS[1:], EST) is None
    assert M.measured_for(runs, [CKPT], dict(SIZE, batch=2), MODELS, EST) is None
    assert M.measured_for(runs, [CKPT, "lora.safetensors"], SIZE, MODELS, EST) is None
    assert M.measured_for([], [CKPT], SIZE, MODELS, EST) is None


def test_no_sampler_node_no_measured():
    r = run("a", 1767225600, 3 * GiB, sampler_type="KSamplerSelect")
    assert M.measured_for([r], [CKPT], SIZE, MODELS, EST) is None


def test_cpu_only_host_says_what_rss_holds_and_puts_no_percent_on_it():
    """ui49: a CPU run's face read "measured here 4.80 GiB (+49.7 % vs formula)" for an SD1.5 graph whose sample
    phase is 3.21 GiB: the RSS is the whole process (interpreter, torch, every model in RAM), so the percentage
    measured the rest of the process, not the formula. The figure is shown with what it holds, and no percentage."""
    r = run("cpu-run", 1767225600, int(4.80 * GiB), dev="cpu")
    m = M.measured_for([r], [CKPT], SIZE, MODELS, EST)
    assert (m["compare_to"], m["device"], m["peak"], m["formula"], m["diff_pct"]) == ("rss", "cpu", int(4.80 * GiB), None, None)
    assert m["note"] == ("the whole ComfyUI process (Python, torch, every model in RAM), not one phase, "
                         "so no % against the formula")
    assert M.format_text(m) == (
        "Measured here: KSampler peaked at 4.80 GiB (process peak RSS, cpu): the whole ComfyUI process (Python, torch, "
        "every model in RAM), not one phase, so no % against the formula; run cpu-run at 2026-01-01T00:00:00+00:00, "
        "1 matching run(s)")
    # a GPU run still gets its percentage against the like-for-like formula figure, and no note
    g = M.measured_for([run("gpu-run", 1767225600, int(3.3 * GiB))], [CKPT], SIZE, MODELS, EST)
    assert (g["diff_pct"], "note" in g) == (10.0, False)


def test_cuda_preferred_over_host_rss_and_custom_sampler():
    r = run("a", 1767225600, int(2.7 * GiB), sampler_type="SamplerCustomAdvanced")
    r["nodes"][1]["peak"]["cpu"] = 20 * GiB
    m = M.measured_for([r], [CKPT], SIZE, MODELS, EST)
    assert (m["device"], m["peak"], m["node"], m["diff_pct"]) == ("cuda:0", int(2.7 * GiB), "SamplerCustomAdvanced", -10.0)


def test_mps_compares_peak_device_terms():
    r = run("a", 1767225600, 4 * GiB, dev="mps")
    m = M.measured_for([r], [CKPT], SIZE, MODELS, EST)
    # 2 GiB + 1 GiB + 100 MiB margin + 300 MiB context = 3.390625 GiB
    assert (m["compare_to"], m["formula"]) == ("peak_device", 3 * GiB + 400 * MiB)
    assert m["diff_pct"] == round(100 * (4 - 3.390625) / 3.390625, 1) == 18.0


class _Store:
    def __init__(self, runs):
        self.runs, self.reads = runs, 0

    def read(self, limit=None):
        self.reads += 1
        return self.runs


PROMPT = {"4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": CKPT}},
          "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a garden", "clip": ["4", 1]}}}


class _Patcher:
    def __init__(self, model, dtype):
        self.model, self._dtype = model, dtype

    def model_dtype(self):
        return self._dtype


def _loaded():
    import torch

    class SD15:
        pass

    class BaseModel:
        model_config = SD15()

    class SD1ClipModel:
        pass

    class AutoencoderKL:
        pass

    model = _Patcher(BaseModel(), torch.float16)
    clip = types.SimpleNamespace(patcher=_Patcher(SD1ClipModel(), torch.float16))
    vae = types.SimpleNamespace(patcher=_Patcher(AutoencoderKL(), torch.bfloat16))
    return model, clip, vae


def test_lookup_reads_the_store_once_and_names_models_as_the_recorder(monkeypatch):
    pytest.importorskip("torch")
    from gpu_garden.nodes import recorder, recorder_state

    model, clip, vae = _loaded()
    assert M.current_models(model, clip, vae) == MODELS
    # the recorder writes the same (name, dtype) for a loaded model: one source (host_models)
    info = recorder._model_info(types.SimpleNamespace(model=vae.patcher, device="cpu", model_memory=lambda: 1))
    assert (info["name"], info["dtype"]) == ("AutoencoderKL", "bfloat16")
    st = _Store([run("r1", 1767225600, int(3.3 * GiB))])
    monkeypatch.setattr(recorder_state, "store", lambda: st)
    m = M.lookup(PROMPT, SIZE, model, clip, vae, EST)
    assert (m["run"], m["peak"], st.reads) == ("r1", int(3.3 * GiB), 1)
    assert "measured here" in M.format_text(m).lower() and "+10.0 %" in M.format_text(m)
    assert M.lookup({"5": {"class_type": "EmptyLatentImage", "inputs": {"width": 512, "height": 512}}},
                    SIZE, model, clip, vae, EST) is None  # no model file in the prompt: the store is not read
    assert st.reads == 1


def test_lookup_never_raises(monkeypatch):
    from gpu_garden.nodes import recorder_state

    def broken():
        raise OSError("disk gone")

    monkeypatch.setattr(recorder_state, "store", broken)
    assert M.lookup(PROMPT, SIZE, object(), None, None, EST) is None
    assert M.lookup(None, SIZE, None, None, None, EST) is None


def test_dynamic_vram_runs_are_compared_with_the_activations_alone():
    """Dynamic VRAM (comfy-aimdo) keeps the weights in VRAM pages PyTorch's allocator never sees: such a run's
    sampler peak (1.1 GiB here) is activations only. Against weights + activations (3 GiB) it read -63 %; it is
    compared with the formula's activations (1 GiB), labelled, and never mixed with a classic run's peak."""
    dyn = dict(run("dyn", 1767225600, int(1.1 * GiB)), dynamic_vram=True)
    m = M.measured_for([dyn], [CKPT], SIZE, MODELS, EST)
    assert m["compare_to"] == M.DYNAMIC and m["formula"] == 1 * GiB and m["diff_pct"] == 10.0
    assert "weights not included" in M.format_text(m)
    classic = run("classic", 1767139200, int(3.3 * GiB))  # a classic run, when there is one, is the comparison
    m = M.measured_for([dyn, classic], [CKPT], SIZE, MODELS, EST)
    assert m["compare_to"] == "peak_torch" and m["run"] == "classic" and m["runs"] == 1 and m["formula"] == 3 * GiB
