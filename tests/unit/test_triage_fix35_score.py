"""fix35 item 1: the unseen corpus's scorer reads cause, runtime, device and numbers from one event, the headline.

tests/support/unseen_corpus.score took "cause" from triage's answer (the headline event since fix34: the last that failed,
else the last) but runtime, device kind and numbers from events[-1]. A log whose failure is followed by an event the run
went on from (ComfyUI's tiled VAE retry) was then scored on the retry's empty numbers. The logs here are test_triage_fix34's
(written from ComfyUI's and PyTorch's own lines); the second test feeds score a made-up triage answer whose two events
differ in every field, so that reading any of them from the wrong event fails."""
from gpu_garden.memory.triage import engine
from support import unseen_corpus as U
from test_triage_fix34_recovered import MIXED

HEAD = ("# thread: https://example.invalid/fix35\n"
        "# expect: cause={cause} runtime={runtime} device={device}\n"
        "# numbers: {numbers}\n")


def write_case(tmp_path, body, **head):
    p = tmp_path / "case.log"
    p.write_text(HEAD.format(**head) + body, encoding="utf-8")
    return p


def test_a_failure_before_a_recovered_retry_is_scored_on_the_failure(tmp_path):
    # MIXED: a tiled VAE retry, a torch OOM (3.25 GiB asked, 2.10 GiB free of 15.70 GiB), another tiled retry (no numbers)
    p = write_case(tmp_path, MIXED, cause="activations", runtime="comfyui", device="cuda",
                   numbers="requested=3.25 GiB; free=2.10 GiB; total=15.70 GiB; allocated=12.40 GiB")
    r = U.score(p)
    assert r["found"] and r["got"] == "activations" and r["cause_ok"]
    assert r["top2"][0][0] == "activations"                 # the retry's list would head with vae-decode
    assert r["numbers_bad"] == []                           # the last event (the retry) has no numbers at all
    assert r["runtime_ok"] and r["device_ok"]


def test_every_field_comes_from_the_headline_event(tmp_path, monkeypatch):
    def event(cause, runtime, device, numbers, recoverable):
        return {"causes": [{"id": cause, "confidence": 0.9}], "runtime": runtime, "device_kind": device,
                "numbers": numbers, "recoverable": recoverable}
    failed = event("kv-cache", "vllm", "rocm", {"requested": 2 ** 30}, False)
    went_on = event("fragmentation", "sglang", "cuda", {"requested": 5}, True)
    answer = {"found": True, "cause": "kv-cache", "uncertain": False, "headline": 0, "recovered_only": False,
              "events": [failed, went_on]}
    monkeypatch.setattr(engine, "triage_text", lambda text, context=None: answer)
    r = U.score(write_case(tmp_path, "x\n", cause="kv-cache", runtime="vllm", device="rocm", numbers="requested=1 GiB"))
    assert (r["got"], r["got_runtime"], r["got_device"]) == ("kv-cache", "vllm", "rocm")
    assert r["cause_ok"] and r["runtime_ok"] and r["device_ok"] and r["numbers_bad"] == []
    assert r["top2"] == [("kv-cache", 0.9)]
