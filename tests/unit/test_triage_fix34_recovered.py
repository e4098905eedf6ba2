"""fix34 item 1: one way to treat an event the run went on from.

Two mechanisms disagreed: a recoverable event (ComfyUI's tiled VAE retry) was kept and marked recovered, while review28's
drop threw away PyTorch's allocator warning when a line said the run went on. Now both keep the event, marked recovered:
it names the answer (the CLI's headline, --json's "cause" and "headline", the panel's cause, causes, guide and numbers)
only where no event failed, and a log of such events only says so: no failure to fix, the events listed. Logs written
here from ComfyUI's own lines (sd.py's tiled retry warning, execution.py's exception block, main.py's "Prompt executed"),
PyTorch's CUDACachingAllocator warning and uvicorn's startup line, not copied from the corpus."""
from gpu_garden.memory.triage import engine, render
from gpu_garden.nodes import oom_build

TILED = "Warning: Ran out of memory when regular VAE decoding, retrying with tiled VAE decoding.\n"
FAIL = ("CUDA out of memory. Tried to allocate 3.25 GiB. GPU 0 has a total capacity of 15.70 GiB of which 2.10 GiB is free. "
        "Of the allocated memory 12.40 GiB is allocated by PyTorch, and 0.61 GiB is reserved by PyTorch but unallocated.")
MIXED = ("got prompt\n"
         "Requested to load AutoencoderKL\n" + TILED +
         "Prompt executed in 48.70 seconds\n"
         "got prompt\n"
         f"!!! Exception during processing !!! {FAIL}\n"
         "Traceback (most recent call last):\n"
         '  File "/opt/ComfyUI/execution.py", line 327, in execute\n'
         "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
         '  File "/opt/ComfyUI/comfy/ldm/modules/attention.py", line 460, in attention_pytorch\n'
         "    out = torch.nn.functional.scaled_dot_product_attention(q, k, v)\n"
         f"torch.OutOfMemoryError: {FAIL}\n"
         "\n"
         "Prompt executed in 11.02 seconds\n"
         "got prompt\n"
         "Requested to load AutoencoderKL\n" + TILED +
         "Prompt executed in 50.13 seconds\n")
ONLY_TILED = "got prompt\nRequested to load AutoencoderKL\n" + TILED + "Prompt executed in 48.70 seconds\n"
WARN = ("[W1130 08:02:41.000000000 CUDACachingAllocator.cpp:3933] memory allocation failed with OOM on device 0 while trying "
        "to allocate 33554432 bytes (free: 20971520, total: 85095874560).\n")
ONLY_WARN = ("INFO 11-30 08:02:30 [gpu_model_runner.py:1800] Model loading took 61.2 GiB memory\n" + WARN +
             "INFO:     Application startup complete.\n")


def test_a_recovered_event_is_listed_but_never_names_the_answer_beside_a_failure():
    res = engine.triage_text(MIXED)
    events = res["events"]
    assert [e["recoverable"] for e in events] == [True, False, True]
    assert res["headline"] == 1 and not res["recovered_only"]
    assert res["cause"] == events[1]["causes"][0]["id"] == "activations"
    text = render.render_human(res)
    assert text.startswith("Cause: ") and "activations" in text.splitlines()[0]
    assert "vae-decode (recovered)" in text                     # the events the run went on from are still listed


def test_the_panel_reads_the_event_the_answer_names(monkeypatch):
    monkeypatch.setattr(oom_build, "_session_ooms", [])     # (review30) no earlier test's OOMs as this process's history
    monkeypatch.setattr(oom_build, "_triage_report", lambda text, ctx: engine.triage_text(MIXED, ctx))
    report = oom_build.build_report({"node_id": "8"}, RuntimeError("CUDA out of memory"), {})
    assert report["cause"] == "activations"
    assert report["causes"][0]["id"] == "activations"          # not the later recovered retry's vae-decode
    assert report["numbers"]["requested"] == int(3.25 * 2 ** 30)
    assert report["recovered_only"] is False and "summary" not in report


def test_a_log_of_recovered_events_says_there_is_no_failure_to_fix(monkeypatch):
    for log, cause in ((ONLY_TILED, "vae-decode"), (ONLY_WARN, "fragmentation")):
        res = engine.triage_text(log)
        assert res["found"] and res["recovered_only"], log
        assert [e["recoverable"] for e in res["events"]] == [True], log
        assert res["events"][0]["causes"][0]["id"] == cause     # what happened, kept
        first = render.render_human(res).splitlines()[0]
        assert first.startswith("No failure to fix") and "Cause:" not in first, first
        # the guide's lead-in fits every recovered kind (an allocator warning has no slow retry: review30's nit)
        assert f"To avoid the event next time, the guide for {cause}:" in render.render_human(res), log
        monkeypatch.setattr(oom_build, "_session_ooms", [])
        monkeypatch.setattr(oom_build, "_triage_report", lambda text, ctx, log=log: engine.triage_text(log, ctx))
        report = oom_build.build_report({"node_id": "8"}, RuntimeError("CUDA out of memory"), {})
        # the node raised (a capture is only made for ComfyUI's FAILURE status): a failure with the event's cause and a note
        assert report["recovered_only"] is False and "summary" not in report, report
        assert report["cause"] == cause and oom_build.RECOVERED_NOTE in report["notes"], report


def test_an_allocator_warning_the_run_did_not_go_on_from_stays_a_failure():
    res = engine.triage_text(WARN)
    assert res["found"] and not res["recovered_only"] and not res["events"][0]["recoverable"]
    assert render.render_human(res).startswith("Cause: ")
