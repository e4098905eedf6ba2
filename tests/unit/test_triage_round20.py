"""Triage round 20 (batch 42, after first sight): comfy-aimdo's "CUDA API FAILED" line and Ollama's "model failed to load",
written from the runtimes' own format strings (comfy-aimdo src/plat.h check_cu_impl; ollama llm/server.go initModel), not
copied from corpus cases; each with a control that keeps the older reading."""

from support.triage_event import last_event
from gpu_garden.memory.triage import engine, parse as P
from support.regex_time import cpu_limit, cpu_now

# comfy-aimdo: log(DEBUG, "CUDA API FAILED : %s : %s\n", label, desc), label the call's source text, desc cuGetErrorString's;
# older builds printed the code and the assignment: "CUDA API FAILED (%d): err = %s: %s"
AIMDO_MAP = "aimdo: src/plat.h:161:DEBUG:CUDA API FAILED : cuMemMap(vaddr, size, 0, handle, 0) : invalid argument\n"
AIMDO_OLD = "[ERROR] aimdo: /src/plat.h:170:ERROR:CUDA API FAILED (201): err = cuMemCreate(&h, size, &prop, 0): invalid device context\n"
AIMDO_VRAM = "aimdo: src/model-vbar.c:311:ERROR:VRAM Allocation failed (non OOM)\n"
TORCH_OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 11.99 GiB of "
             "which 1.10 GiB is free. Of the allocated memory 9.80 GiB is allocated by PyTorch, and 120.00 MiB is reserved by "
             "PyTorch but unallocated.\n")
# ollama llm/server.go: errors.New("model failed to load, this may be due to resource limitations or an internal error, check
# ollama server logs for details"); the CLI prints "Error: " and the HTTP status before it, an API client the JSON body
OLLAMA_CLI = ("Error: 500 Internal Server Error: model failed to load, this may be due to resource limitations or an internal "
              "error, check ollama server logs for details\n")
OLLAMA_API = ('HTTP 500 {"error":"model failed to load, this may be due to resource limitations or an internal error, check '
              'ollama server logs for details"}\n')


def test_aimdo_cuda_api_failure_is_an_aimdo_fault_not_a_shortage():
    res, ev = last_event("got prompt\n" + AIMDO_MAP * 3)
    assert res["cause"] == "other" and ev["runtime"] == "comfyui" and ev["device_kind"] == "cuda", (res["cause"], ev["runtime"])
    assert ev["causes"][0]["confidence"] >= 0.8, ev["causes"]
    text = " ".join(ev["causes"][0]["evidence"])
    assert "cuMemMap()" in text and '"invalid argument"' in text and "--disable-dynamic-vram" in text, text
    assert ev["guide"]["id"] == "comfyui-aimdo-fault", ev["guide"]["id"]
    assert res["count"] == 1, res["count"]


def test_aimdo_older_form_with_the_error_code_reads_the_call_and_the_error():
    ev = P.recognise(AIMDO_OLD.strip())
    assert ev and ev["kind"] == "comfy.aimdo_cuda" and ev["call"] == "cuMemCreate" and ev["error"] == "invalid device context", ev


def test_cuda_api_failed_from_another_program_is_not_aimdo():
    assert P.recognise("myapp: CUDA API FAILED : cuMemMap(vaddr, size, 0, handle, 0) : invalid argument") is None


def test_aimdo_error_after_the_cuda_line_keeps_its_own_reading():
    res, ev = last_event(AIMDO_MAP + AIMDO_VRAM)
    assert ev["guide"]["id"] == "comfyui-dynamic-vram" and res["cause"] == "other", (ev["guide"]["id"], res["cause"])


def test_an_ordinary_oom_after_the_cuda_line_leads():
    res, ev = last_event(AIMDO_MAP + TORCH_OOM)
    assert res["cause"] == "activations" and res["count"] == 1, (res["cause"], ev["causes"])
    assert "other" not in [c["id"] for c in ev["causes"]] and ev["numbers"]["requested"] == 2 * 1024 ** 3, ev


def test_aimdo_line_of_a_megabyte_is_classified_quickly():
    msg = "aimdo: CUDA API FAILED : cuMemMap(" + "(" * (1 << 20)
    t = cpu_now()
    engine.is_oom_error("RuntimeError", msg)
    assert cpu_now() - t < cpu_limit(0.5)


def test_ollama_load_failure_is_uncertain_between_the_context_and_the_weights():
    for text in (OLLAMA_CLI, ">>> /show info\n" + OLLAMA_API):
        res, ev = last_event(text)
        assert ev["runtime"] == "ollama" and res["uncertain"], (ev["runtime"], res["uncertain"])
        top = [c["id"] for c in ev["causes"]]
        assert top[:2] == ["kv-cache", "weights-exceed-vram"] and "other" in top, ev["causes"]
        # kv-cache 1.0, weights 0.9, other 0.5 and "not determined" 0.75
        assert [c["confidence"] for c in ev["causes"][:2]] == [round(1.0 / 3.15, 2), round(0.9 / 3.15, 2)], ev["causes"]
        assert ev["guide"]["id"] == "ollama-load-failed", ev["guide"]["id"]
        assert "OLLAMA_CONTEXT_LENGTH" in ev["guide"]["markdown"] and "server log" in ev["guide"]["markdown"]


def test_ollama_server_log_naming_the_kv_cache_outranks_the_client_line():
    server = ('time=2026-02-08T10:00:01Z level=INFO source=server.go msg="llama runner started"\n'
              "llama_kv_cache_init: failed to allocate buffer for kv cache\n")
    res, ev = last_event(server + OLLAMA_CLI)
    assert res["cause"] == "kv-cache" and not res["uncertain"], (res["cause"], ev["causes"])


def test_the_runner_stopping_mid_request_is_not_a_load_failure():
    assert P.recognise("Error: model runner has unexpectedly stopped, this may be due to resource limitations or an internal "
                       "error, check ollama server logs for details") is None


def test_both_lines_are_found_past_the_head_of_a_long_log():
    filler = "".join(f"[INFO] step {i}: queue idle, nothing to report here\n" for i in range(30000))   # ~1.5 MB, past HEAD
    for line, cause in ((AIMDO_MAP, "other"), (OLLAMA_CLI, "kv-cache")):
        res = engine.triage_text(filler + line + filler[:5000])
        assert res["found"] and res["cause"] == cause and res["events"][-1]["line"] == 30001, (line, res["cause"])
