"""Triage round 71 (tune162, tuned on batches 162, 165, 167 and 168). Lines written from the formats of PyTorch's old
caching-allocator message and of ACE-Step 1.5's VRAM pre-flight line; figures invented, not copies of corpus cases.

- PyTorch <= 2.0's message with cached-but-unallocated slack 16x the request or more, but under a quarter of the card, on
  a card full of live tensors: the batch or the sequence length (huggingface/sentence-transformers#57's shape), neither
  fragmentation (the old 16x carve-out of the fragmentation row) nor the weights (script_full: slack that large is
  tensors freed and kept, passes ran).
- An application's own VRAM pre-flight check that refused a job (ace-step/ACE-Step-1.5#747): nothing was allocated, the
  estimate refused (other), with the job's size as the runner-up; the same line passing is no failure."""
from support.triage_event import top


def _old(req, total, alloc, free, cached):
    return (f"RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; {total} total capacity; {alloc} already "
            f"allocated; {free} free; {cached} cached)\n")


# slack 1.02 GiB: 21.8x a 48 MiB request, 6.9 % of a 14.76 GiB card (under the quarter big_slack asks of the old message);
# 87 % of the card allocated
CHURNED = _old("48.00 MiB", "14.76 GiB", "12.90 GiB", "21.75 MiB", "1.02 GiB")


def test_old_message_slack_16x_the_request_is_not_fragmentation():
    cause, conf, ev = top(CHURNED)
    assert cause != "fragmentation", ev["causes"]
    assert conf.get("fragmentation", 0) < conf[cause], ev["causes"]


def test_old_message_churned_cache_reads_as_the_pass_not_the_weights():
    cause, conf, ev = top(CHURNED)
    assert cause == "activations", ev["causes"]
    assert "weights-exceed-vram" not in conf, ev["causes"]


def test_old_message_small_slack_keeps_the_weights_reading():
    """Slack under 16x the request (1.02 GiB over a 96 MiB request, 10.9x): the message-alone weights row still fires."""
    cause, conf, ev = top(_old("96.00 MiB", "14.76 GiB", "12.90 GiB", "21.75 MiB", "1.02 GiB"))
    assert "weights-exceed-vram" in conf, ev["causes"]


PREFLIGHT = ("2026-05-02 10:14:31.118 | INFO     | app.handler.generate:_vram_preflight_check:71 - [generate] "
             "VRAM pre-flight: {free} GB free, ~{need} GB needed (batch=4, duration=120s, mode=turbo).\n")


def test_app_vram_preflight_refusal_is_the_check_not_a_shortage():
    cause, conf, ev = top("CUDA GPU detected: NVIDIA GeForce RTX 4060 Ti (16.0 GB)\n"
                          + PREFLIGHT.format(free="5.10", need="9.80"))
    assert cause == "other", ev["causes"]
    assert "pre-flight" in ev["causes"][0]["evidence"][0], ev["causes"][0]
    assert ev["causes"][1]["id"] == "activations", ev["causes"]
    assert ev["runtime"] == "pytorch" and ev["device_kind"] == "cuda", (ev["runtime"], ev["device_kind"])
    assert abs(ev["numbers"]["free"] - 5.10 * 2**30) < 2**20 and abs(ev["numbers"]["required"] - 9.80 * 2**30) < 2**20
    assert ev["guide"]["id"] == "app-vram-preflight", ev["guide"]["id"]


def test_app_vram_preflight_that_passes_is_no_failure():
    from gpu_garden.memory.triage import engine
    assert not engine.triage_text(PREFLIGHT.format(free="7.90", need="5.00"))["found"]
