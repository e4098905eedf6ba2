"""The OOM panel's headline (web/lib/oom_parts.js causeLine) for a node whose exception text triage reads as an event a
run goes on from (triage's "recovered_only"). The node raised (oom_capture builds a report only for ComfyUI's FAILURE
status), so the panel names a cause, never "No failure to fix" (review30's open item: fix34 had headed such a report with
that summary); a note says how the message read. Log written here (test_triage_fix34_recovered's ONLY_WARN: PyTorch's
warning, then uvicorn's startup line)."""
import json

from support import node_js

from gpu_garden.memory.triage import engine
from gpu_garden.nodes import oom_build

WARN = ("[W1130 08:02:41.000000000 CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 0 while trying "
        "to allocate 33554432 bytes (free: 20971520, total: 85095874560).\n")
ONLY_WARN = ("INFO 11-30 08:02:30 [gpu_model_runner.py:1800] Model loading took 61.2 GiB memory\n" + WARN +
             "INFO:     Application startup complete.\n")


def test_a_node_that_raised_heads_with_a_cause_even_when_its_message_reads_as_recovered(monkeypatch):
    res = engine.triage_text(ONLY_WARN)
    assert res["recovered_only"] and res["uncertain"], res      # the case: both at once
    monkeypatch.setattr(oom_build, "_session_ooms", [])         # this process's OOM history: left as it was
    monkeypatch.setattr(oom_build, "_triage_report", lambda text, ctx: engine.triage_text(ONLY_WARN, ctx))
    report = oom_build.build_report({"node_id": "8"}, RuntimeError("CUDA out of memory"), {})
    report = json.loads(json.dumps(report, default=str))
    line = node_js.call("lib/oom_parts.js", "causeLine", report)
    assert not line["label"].startswith("No failure"), line
    assert "uncertain" in line["label"] or "causes fit" in line["label"], line   # triage's uncertain pair, as for any failure
    assert oom_build.RECOVERED_NOTE in report["notes"], report["notes"]
