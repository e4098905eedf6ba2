"""The Footprint Estimate node's translation layer without ComfyUI: loaded modules -> tensor tables (incl.
ComfyUI-GGUF's quantized tensors), latent shapes -> pixel sizes, the stop message, the UI payload."""
import importlib
import json
import sys
import types
from pathlib import Path

import pytest

from gpu_garden.memory.estimate import formula as E
from gpu_garden.memory.estimate import layouts
from gpu_garden.memory.units import GiB

STUBS = Path(__file__).parent / "stubs"


@pytest.fixture
def node(monkeypatch):
    monkeypatch.syspath_prepend(str(STUBS))
    for k in [k for k in sys.modules if k.startswith("comfy_api") or k == "gpu_garden.nodes.estimate"]:
        monkeypatch.delitem(sys.modules, k)
    return importlib.import_module("gpu_garden.nodes.estimate")


class FakeTensor:
    def __init__(self, dtype, shape, **extra):
        self.dtype, self.shape = dtype, shape
        self.__dict__.update(extra)


class FakeModule:
    def __init__(self, sd):
        self._sd = sd

    def state_dict(self):
        return self._sd


def test_table_of_reads_torch_and_gguf_tensors(node):
    q8 = types.SimpleNamespace(name="Q8_0")
    m = FakeModule({"a.weight": FakeTensor("torch.bfloat16", (4, 8)),
                    "b.weight": FakeTensor("torch.uint8", (3072, 68), tensor_type=q8, tensor_shape=(3072, 64)),
                    "c.weight": FakeTensor("torch.float8_e4m3fn", (16, 16))})
    assert node.table_of(m) == {"a.weight": ("BF16", (4, 8)), "b.weight": ("Q8_0", (3072, 64)), "c.weight": ("F8_E4M3", (16, 16))}


@pytest.mark.parametrize("shape,family,size", [
    ([1, 4, 64, 64], "sd1", (512, 512, 1, 1)),
    ([2, 16, 128, 96], "flux1", (768, 1024, 1, 2)),
    ([1, 16, 21, 60, 104], "wan21", (832, 480, 81, 1)),
    ([1, 48, 31, 44, 80], "wan22", (1280, 704, 121, 1)),
])
def test_latent_size(node, shape, family, size):
    assert node.latent_size(shape, family) == size


def test_stop_message_and_ui_payload(node):
    t = layouts.table("flux_flux1-dev")
    est = E.judge(E.estimate([{"table": t, "role": "diffusion_model", "source": "MODEL"}], 1024, 1024, cfg=None), 16 * GiB)
    msg = node.stop_message(est)
    assert "stopped the run before sampling" in msg and "16.00 GiB" in msg and "\n" not in msg
    assert "out of memory" not in msg.lower()  # must not be mistaken for an OOM by the OOM capture
    ui = node.for_ui(est, "16 GiB (set on the node)", None)
    json.dumps(ui)
    # the peak is over 16 GiB (verdict), but ComfyUI loads FLUX partially: the summary says it runs (task ux-estimate)
    assert ui["verdict"] == "does not fit" and ui["summary"].startswith("RUNS WITH OFFLOAD")
    assert ui["outcome"]["offloaded"] == ui["peak"] - 16 * GiB and not node.est_verdict_exit(est)
    assert len(ui["knobs"]) <= 5 and "_ctx" not in ui
    assert {t["gb"]: t["verdict"] for t in ui["tiers"]}[16] == "does not fit" and ui["tiers"][-1]["verdict"] == "fits"
    assert ui["peak_torch"] < ui["peak_device"] < ui["peak"] and ui["vae"]["per_sample"] > 0


def test_ui_payload_says_when_the_run_is_on_the_cpu(node):
    """ComfyUI --cpu with no vram_gb: the estimate is judged on host RAM and sizes no card (min_vram_gb None), so the
    face must not print "smallest common card: none up to 141 GB" (it did, beside its own tier line "8 GB: fits";
    found walking the first hour, ux20). A card budget on the same CPU host, or a GPU, is not a CPU run."""
    t = layouts.table("sd15_v1-5-pruned-emaonly-fp16")
    parts = [t]  # the whole checkpoint: split into its diffusion model, text encoder and VAE
    cpu = E.judge(E.estimate(parts, 64, 64, cfg=True, policy={"device": "cpu"}), None)
    ui = node.for_ui(cpu, "ComfyUI runs on the CPU here: no GPU budget (set vram_gb to plan for a card)", None)
    assert ui["on_cpu"] is True and ui["min_vram_gb"] is None
    card = E.judge(E.estimate(parts, 64, 64, cfg=True, policy={"device": "cpu"}), 8 * GiB)  # vram_gb 8 on a CPU host
    assert node.for_ui(card, "8 GiB (set on the node)", None)["on_cpu"] is False
    gpu = E.judge(E.estimate(parts, 64, 64, cfg=True), None)
    ui = node.for_ui(gpu, "no budget (no GPU found)", None)
    assert ui["on_cpu"] is False and ui["min_vram_gb"] is not None  # a card is sized: the face keeps its line


def test_budget_from_node_input(node):
    snap = {"devices": [{"index": 0, "name": "GPU", "backend": "cuda", "total": 24 * GiB, "other_processes": 2 * GiB}]}
    assert node.live_budget(snap, 0)[0] == 22 * GiB
    assert node.live_budget(snap, 12)[0] == 12 * GiB
    # the face names the widget and its unit: vram_gb is read as GiB, beside card tiers in GB (web50 item 4)
    assert node.live_budget(snap, 12)[1] == "12 GiB (the node's vram_gb, read as GiB)"


def test_budget_is_the_compute_device_never_an_idle_gpu(node, monkeypatch):
    """Under --cpu the probe still lists the machine's GPU (through NVML): ComfyUI computes on the CPU, so there
    is no VRAM budget (a 24 GB card must not make a CPU run 'fit', tile its decode or stop it). Beside an XPU, an
    NVIDIA card at the same index is not the budget either."""
    import torch

    from gpu_garden.nodes import host_models

    gpu = {"index": 0, "name": "GPU", "backend": "cuda", "device": "cuda:0", "total": 24 * GiB, "other_processes": 0}
    xpu = {"index": 0, "name": "Arc", "backend": "xpu", "device": "xpu:0", "total": 16 * GiB, "other_processes": 0}
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cpu"))
    b, label = node.live_budget({"devices": [gpu]}, 0)
    # one plain sentence: the faces showed "budget: no budget: ComfyUI computes on the CPU..." (ux20's walk)
    assert b is None and label.startswith("ComfyUI runs on the CPU here: no GPU budget"), label
    assert node.live_budget({"devices": [gpu]}, 8)[0] == 8 * GiB  # planning for a card stays possible
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("xpu", 0))
    assert node.live_budget({"devices": [gpu, xpu]}, 0)[0] == 16 * GiB
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cuda", 0))
    assert node.live_budget({"devices": [gpu, xpu]}, 0)[0] == 24 * GiB
    # a model a MultiGPU loader put on the second card is judged against that card
    second = dict(gpu, index=1, device="cuda:1", total=8 * GiB)
    assert node.live_budget({"devices": [gpu, second]}, 0, torch.device("cuda", 1))[0] == 8 * GiB
    assert node.live_budget({"devices": [gpu, second]}, 0, torch.device("cpu"))[0] is None


def test_reserve_is_read_from_comfyui(node, monkeypatch):
    """The node uses model_management.extra_reserved_memory() (ComfyUI's platform default or --reserve-vram),
    not a constant; without ComfyUI it falls back to the estimate's own per-platform default."""
    mm = types.ModuleType("comfy.model_management")
    mm.extra_reserved_memory = lambda: 1536 << 20
    comfy = types.ModuleType("comfy")
    comfy.model_management = mm
    monkeypatch.setitem(sys.modules, "comfy", comfy)
    monkeypatch.setitem(sys.modules, "comfy.model_management", mm)
    assert node.comfy_reserve() == 1536 << 20
    t = layouts.table("sd15_v1-5-pruned-emaonly-fp16")
    est = E.estimate([{"table": t, "role": "diffusion_model", "source": "MODEL"}], 512, 512,
                     policy={"reserve": node.comfy_reserve()})
    assert est["fixed"]["comfyui_reserve"] == 1536 << 20
    mm.extra_reserved_memory = lambda: (_ for _ in ()).throw(RuntimeError("no"))
    assert node.comfy_reserve() is None
    assert E.estimate([{"table": t, "role": "diffusion_model"}], 512, 512, policy={"reserve": None})["fixed"]["comfyui_reserve"] == 400 << 20


# -- exact mode (nodes/estimate_exact.py): the loaded model traced on meta tensors ---------------------------
from gpu_garden.nodes import estimate_exact as X  # noqa: E402


@pytest.fixture(autouse=True)
def _host_attention_unknown(monkeypatch):
    """host_attention() answers "attention_pytorch" once some other test imported ComfyUI through the tracer;
    these tests run outside any ComfyUI, where the host's choice is unknown."""
    from gpu_garden.memory.trace import comfy_checkout as trace_comfy
    monkeypatch.setattr(trace_comfy, "_IMPORTED_BY_US", False)

try:
    import torch
except ImportError:  # pragma: no cover - CI has torch; the tests above do not need it
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="exact mode needs torch")


if torch is not None:
    class SD15:
        """Stands in for ComfyUI's model config class of that name (exact mode keys its recipe on the class name)."""

    class Other:
        pass

    class TinyUNet(torch.nn.Module):
        """Conv in, cross-attention to the text context through SDPA, conv out: enough of a U-Net to trace."""

        def __init__(self):
            super().__init__()
            self.conv_in = torch.nn.Conv2d(4, 32, 3, padding=1)
            self.to_q = torch.nn.Linear(32, 32)
            self.to_kv = torch.nn.Linear(768, 64)
            self.conv_out = torch.nn.Conv2d(32, 4, 3, padding=1)

        def forward(self, x, context):
            h = self.conv_in(x)
            b, c, hh, ww = h.shape
            tokens = h.flatten(2).transpose(1, 2)
            k, v = self.to_kv(context).chunk(2, dim=-1)
            q = self.to_q(tokens)
            a = torch.nn.functional.scaled_dot_product_attention(q.view(b, -1, 4, 8).transpose(1, 2),
                                                                 k.reshape(b, -1, 4, 8).transpose(1, 2),
                                                                 v.reshape(b, -1, 4, 8).transpose(1, 2))
            h = h + a.transpose(1, 2).reshape(b, hh * ww, c).transpose(1, 2).reshape(b, c, hh, ww)
            return self.conv_out(h)

    class TinyBaseModel(torch.nn.Module):
        """The parts of comfy.model_base.BaseModel exact mode calls: apply_model(x, sigma, c_crossattn=...,
        transformer_options=...), get_dtype(), manual_cast_dtype, model_config."""

        def __init__(self, config=SD15):
            super().__init__()
            self.diffusion_model = TinyUNet()
            self.model_config = config()
            self.manual_cast_dtype = None
            self.calls = []

        def get_dtype(self):
            return torch.float32

        def apply_model(self, x, t, c_crossattn=None, transformer_options=None, **kwargs):
            self.calls.append((tuple(x.shape), tuple(c_crossattn.shape), x.device.type, dict(transformer_options)))
            return self.diffusion_model(x, c_crossattn)

    class Patcher:
        def __init__(self, base):
            self.model = base


def _param_bytes(m):
    return sum(p.numel() * p.element_size() for p in m.parameters())


@needs_torch
def test_conditioning_shapes_follow_the_family_recipe():
    assert X.conditioning_shapes("sd1", 2) == {"c_crossattn": (2, 77, 768)}
    assert X.conditioning_shapes("sdxl", 2) == {"c_crossattn": (2, 77, 2048), "y": (2, 2816)}
    assert X.conditioning_shapes("flux1", 1) == {"c_crossattn": (1, 256, 4096), "y": (1, 768), "guidance": (1,)}


@needs_torch
def test_exact_traces_the_loaded_module_without_touching_its_weights():
    base = TinyBaseModel()
    before = {n: (p.data_ptr(), p.device.type, p.dtype) for n, p in base.named_parameters()}
    r = X.exact(Patcher(base), [1, 4, 16, 16], 2)
    assert r["ok"], r
    assert base.calls[0][:3] == ((2, 4, 16, 16), (2, 77, 768), "meta")     # cond + uncond, on meta tensors
    assert r["latent"] == [2, 4, 16, 16] and r["context"] == [2, 77, 768] and r["family"] == "sd1"
    assert r["weights"] == _param_bytes(base) and r["peak"] == r["weights"] + r["activations_peak"]
    assert r["peak"] > r["weights"] and r["at"]["op"].startswith("aten.")
    assert r["attention"]["calls"] == 1 and r["attention"]["host"] == "unknown"
    assert set(r["attention"]["peak"]) >= {"math"} and r["seconds"] >= 0 and r["dtype"] == "float32"
    # the real parameters are back, untouched: same storage, device and dtype
    assert {n: (p.data_ptr(), p.device.type, p.dtype) for n, p in base.named_parameters()} == before
    json.dumps(r)


@needs_torch
def test_exact_allocates_nothing_proportional_to_the_latent():
    import resource

    base = TinyBaseModel()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    r = X.exact(Patcher(base), [1, 4, 2048, 2048], 2)        # ~4M tokens: tens of GiB if it were real
    assert r["ok"], r
    assert r["activations_peak"] > 4 * GiB
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss < GiB // 2


@needs_torch
def test_exact_falls_back_with_one_line_and_never_raises():
    r = X.exact(Patcher(TinyBaseModel(Other)), [1, 4, 8, 8], 2)
    assert r["ok"] is False and r["reason"].startswith("no exact recipe for Other models (known: ")
    assert X.exact(object(), [1, 4, 8, 8], 2)["reason"] == "this MODEL has no ComfyUI diffusion model to trace"
    bad = X.exact(Patcher(TinyBaseModel()), [1, 16, 8, 8], 2)   # a latent with the wrong channel count
    assert bad["ok"] is False and bad["reason"].startswith("trace failed on latent [1, 16, 8, 8]: RuntimeError: ")
    assert "\n" not in bad["reason"] and len(bad["reason"]) <= 200
    assert X.reason_of(ImportError("No module named 'torch.utils._python_dispatch'\nmore")) == \
        "this torch cannot trace (No module named 'torch.utils._python_dispatch')"


@needs_torch
def test_deadline_stops_a_slow_trace_and_leaves_no_hook():
    import time

    from torch.nn.modules import module as torch_module

    class Slow(torch.nn.Module):
        def forward(self, x):
            time.sleep(0.02)
            return x

    class Deep(TinyBaseModel):
        def __init__(self):
            super().__init__()
            self.slow = torch.nn.Sequential(*[Slow() for _ in range(20)])

        def apply_model(self, x, t, c_crossattn=None, transformer_options=None, **kwargs):
            return self.slow(x)

    hooks = len(torch_module._global_forward_pre_hooks)
    base = Deep()
    r = X.exact(Patcher(base), [1, 4, 8, 8], 2, time_limit=0.05)
    assert r == {"ok": False, "reason": "trace stopped at the 0.05 s limit", "seconds": r["seconds"]}
    assert r["seconds"] < 0.4
    assert len(torch_module._global_forward_pre_hooks) == hooks
    assert all(p.device.type == "cpu" for p in base.parameters())
    with pytest.raises(X.TraceTimeout):
        with X.deadline(0):
            Slow()(torch.zeros(1))


@needs_torch
def test_exact_report_and_comparison_with_the_formula():
    r = X.exact(Patcher(TinyBaseModel()), [1, 4, 16, 16], 2)
    peaks = r["attention"]["peak"]
    fused = next(k for k in peaks if k != "math")
    est = {"breakdown": {"sample": {"weights": peaks[fused] // 2, "activations": peaks[fused] // 2},
                         "sample_naive_attention": {"weights": r["weights"], "activations": peaks["math"]}}}
    cmp_ = X.compare(r, est)
    assert [c["kernel"] for c in cmp_] == [fused, "math"]
    # comparison arithmetic on fixed numbers (not the trace's own): formula 1500 vs traced 1600 with 1000 of weights
    fixed = X.compare({"ok": True, "weights": 1000, "attention": {"peak": {"flash": 1600, "math": 3000}}},
                      {"breakdown": {"sample": {"weights": 1000, "activations": 500},
                                     "sample_naive_attention": {"weights": 1000, "activations": 2500}}})
    assert [c["kernel"] for c in fixed] == ["flash", "math"]
    assert fixed[0]["error"] == pytest.approx(1500 / 1600 - 1) and fixed[0]["error_activations"] == pytest.approx(500 / 600 - 1)
    assert fixed[1]["error"] == pytest.approx(3500 / 3000 - 1) and fixed[1]["error_activations"] == pytest.approx(2500 / 2000 - 1)
    text = X.format_text(r, est)
    assert text.splitlines()[1] == "exact mode (the loaded model traced on meta tensors, one sampling step):"
    assert "Stable Diffusion 1.x as loaded (float32), latent [2, 4, 16, 16], text context [2, 77, 768]" in text
    assert "attention: host uses unknown; traced as" in text and f"formula vs traced, {fused} attention" in text
    assert X.headline(r).startswith("traced sample peak ")
    failed = {"ok": False, "reason": "no exact recipe for Other models", "seconds": 0.0}
    assert X.compare(failed, est) is None
    assert X.format_text(failed).endswith("unavailable, formula only: no exact recipe for Other models")
    assert X.headline(failed) == "exact mode unavailable, formula shown: no exact recipe for Other models"


def sd15_model(load_device):
    """A ModelPatcher stand-in holding SD1.5's UNet layout as fake fp16 tensors, loaded on `load_device`."""
    import torch

    t = layouts.load("sd15_v1-5-pruned-emaonly-fp16")["tensors"]
    sd = {k: FakeTensor(f"torch.{ {'F16': 'float16', 'F32': 'float32'}.get(v['dtype'], 'float16') }", tuple(v["shape"]))
          for k, v in t.items()}

    class Base:
        diffusion_model = FakeModule(sd)
        model_config = None

        def get_dtype(self):
            return torch.float16

        def memory_required(self, shape, cond_shapes={}):
            return 1 << 30

    return types.SimpleNamespace(model=Base(), load_device=load_device)


def test_node_judges_the_model_against_the_gpu_it_loads_on(node, monkeypatch):
    """Footprint Estimate on an SD1.5 UNet a MultiGPU loader put on cuda:1 (a 2 GiB card) while ComfyUI computes on
    cuda:0 (24 GiB): the verdict is cuda:1's (does not fit), not cuda:0's."""
    import torch

    from gpu_garden.nodes import budget_routes, host_models

    model = sd15_model(torch.device("cuda", 1))
    gpus = [{"index": i, "name": f"GPU{i}", "backend": "cuda", "device": f"cuda:{i}", "total": t * GiB, "other_processes": 0}
            for i, t in ((0, 24), (1, 2))]
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cuda", 0))
    monkeypatch.setattr(budget_routes, "current_snapshot", lambda: {"devices": [dict(d) for d in gpus]})
    out = node.GPUGardenFootprintEstimate.execute(model, width=1024, height=1024)
    ui = out.ui["gpu_garden_estimate"][0] if hasattr(out, "ui") else out.args[-1]
    assert ui["budget"] == 2 * GiB and ui["verdict"] == "does not fit", (ui["budget"], ui["verdict"])


def test_a_compute_device_the_probe_does_not_list_has_no_budget(node, monkeypatch):
    """DirectML (torch device "privateuseone"), or an XPU the probe could not read, beside an NVIDIA card: the
    card is not where ComfyUI computes, so it is not the budget (it used to be: the filter kept every device
    when none matched)."""
    import torch

    from gpu_garden.nodes import host_models

    gpu = {"index": 0, "name": "GPU", "backend": "cuda", "device": "cuda:0", "total": 24 * GiB, "other_processes": 0}
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("privateuseone", 0))
    b, label = node.live_budget({"devices": [gpu]}, 0)
    assert b is None and "privateuseone:0" in label
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("xpu", 0))
    assert node.live_budget({"devices": [gpu]}, 0)[0] is None
    assert node.live_budget({"devices": [gpu]}, 8)[0] == 8 * GiB  # planning for a card stays possible


def test_node_says_when_the_size_came_from_the_connected_latent(node, monkeypatch):
    """ux21b: width/height widgets at 1024 beside a connected 512x512 latent: the latent's size is the one used, and
    the answer says so (size_from), so the face can name it; with no latent the widgets' size is used."""
    import torch

    from gpu_garden.nodes import budget_routes, host_models

    model = sd15_model(torch.device("cuda", 0))
    gpu = {"index": 0, "name": "GPU0", "backend": "cuda", "device": "cuda:0", "total": 24 * GiB, "other_processes": 0}
    monkeypatch.setattr(host_models, "compute_device", lambda: torch.device("cuda", 0))
    monkeypatch.setattr(budget_routes, "current_snapshot", lambda: {"devices": [dict(gpu)]})

    def ui_of(out):
        return out.ui["gpu_garden_estimate"][0] if hasattr(out, "ui") else out.args[-1]

    ui = ui_of(node.GPUGardenFootprintEstimate.execute(model, latent={"samples": torch.zeros(1, 4, 64, 64)},
                                                       width=1024, height=1024))
    assert (ui["width"], ui["height"], ui["size_from"]) == (512, 512, "latent")
    ui = ui_of(node.GPUGardenFootprintEstimate.execute(model, width=1024, height=768))
    assert (ui["width"], ui["height"], ui["size_from"]) == (1024, 768, "widgets")
