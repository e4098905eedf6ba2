"""tri71's graph-capture row reads PyTorch's idle private pools as CUDA graphs' unless the log names a program's own pool.
In the OOM panel the host knows more than the log: ComfyUI 2026 runs Dynamic VRAM by default, and comfy-aimdo 0.1 hooks
PyTorch through a MemPool and a pluggable allocator (fact_patterns' own_pool note), so with the Comfy Compiler off (no CUDA
graphs of ComfyUI's own) the pools are comfy-aimdo's: rules_other's own-pool row (other), not graph capture, whose guide
speaks of vLLM's capture list. The context keys come from nodes/oom_build (host_models.dynamic_vram / comfy_compiler)."""
import pytest

from gpu_garden.memory.triage import engine

from test_triage_tri71 import msg


def _answer(ctx):
    res = engine.triage_text(msg(), ctx)
    ev = res["events"][res["headline"]]
    return res["cause"], {c["id"]: c["confidence"] for c in ev["causes"]}


@pytest.mark.parametrize("compiler", ["off", "not available"])
def test_dynamic_vram_without_the_compiler_makes_the_pools_comfy_aimdos(compiler):
    cause, conf = _answer({"node_type": "KSampler", "dynamic_vram": True, "comfy_compiler": compiler})
    assert "graph-capture" not in conf and "other" in conf, conf


@pytest.mark.parametrize("ctx", [{"node_type": "KSampler", "dynamic_vram": True, "comfy_compiler": "on"},
                                 {"node_type": "KSampler", "dynamic_vram": False, "comfy_compiler": "not available"},
                                 {"node_type": "KSampler", "dynamic_vram": None, "comfy_compiler": None}, None])
def test_otherwise_the_pools_may_be_graphs(ctx):
    # the compiler's CUDA graphs, no Dynamic VRAM, or a host that cannot say: tri71's row still reads the pools (with a
    # ComfyUI node the sampler's phase rows weigh as much; their ranking is theirs), and the own-pool row does not
    cause, conf = _answer(ctx)
    assert conf.get("graph-capture", 0) >= max(conf.values()) and "other" not in conf, conf


def test_the_panel_passes_the_hosts_flags(monkeypatch):
    """nodes/oom_build.build_report puts host_models' two flags into triage's context (a stub host: 0.8.0 has neither)."""
    from support.pack import load_pack

    load_pack()
    from gpu_garden.nodes import host_models, oom_build

    seen = {}
    monkeypatch.setattr(host_models, "dynamic_vram", lambda: True)
    monkeypatch.setattr(host_models, "comfy_compiler", lambda: "off")
    monkeypatch.setattr(oom_build, "_triage_report", lambda text, ctx: seen.update(ctx) or None)
    try:
        oom_build.build_report({"node_id": "3", "class_type": "KSampler"}, RuntimeError("CUDA out of memory"), {})
    except Exception:  # the rest of the report needs a host; the context was built before triage ran
        pass
    assert (seen.get("dynamic_vram"), seen.get("comfy_compiler")) == (True, "off"), seen
