"""fix19d item 7: --device cpu must not turn a graph not seen whole (a model file missing) into a verdict:
cpu_run judged host RAM and overwrote the incomplete outcome ("verdict: FITS in host RAM", exit 0)."""
import json

from test_estimate_ux import comfy, est, flux  # noqa: F401  (the fixture and the workflow)


def test_device_cpu_keeps_an_incomplete_graph_incomplete(comfy, tmp_path, capsys):  # noqa: F811
    wf, models = flux(unet="flux1-dev-fp8.safetensors"), str(comfy / "models")
    rc, out, _ = est(tmp_path, capsys, wf, "--models-dir", models, "--device", "cpu")
    v = next(x for x in out.splitlines() if x.startswith("verdict:"))
    assert rc == 1 and v.startswith("verdict: INCOMPLETE") and "FITS" not in v
    rc, out, _ = est(tmp_path, capsys, wf, "--models-dir", models, "--device", "cpu", "--json")
    j = json.loads(out)
    assert rc == 1 and j["verdict"] == j["outcome"]["status"] == "incomplete" and j["headroom"] is None
    # the whole graph on a CPU still gets its host-RAM verdict
    rc, out, _ = est(tmp_path, capsys, flux(), "--models-dir", models, "--device", "cpu", "--json")
    assert json.loads(out)["outcome"]["status"] in ("fits", "tight", "does not fit")
