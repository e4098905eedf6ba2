"""Failure-dense logs (a loop that logs an OOM on every line, thousands of times): what each failure reads back from
the window before it must cost a few C passes, not a regex try at every byte, and find exactly what the plain
patterns find (the references below: window.py's earlier calls)."""
import random
import re

from support.window_check import check_window_lines
from gpu_garden.memory.triage import lines as L
from gpu_garden.memory.triage import window as W

_PICK = [b"got prompt\n", b"Requested to load SDXL\n", b"[Memory Management] Target: KModel (2.1 GB)\n",
         b"To load target model JointTextEncoder\n", b"Loading Model: {'checkpoint_info': 1}\n",
         b"[2025-03-01 10:00:00] Initializing QuantizedFluxModel\n", b"VRAM > 14GiB, disable CPU offload\n",
         b"Disabling CPU offload for the transformer\n", b"Moving text encoder 2 to cuda\n", b"Sending the model to GPU\n",
         b"putting vae to the GPU\n", b"Transferring DiT to device\n", b"moving Model to mps\n", b"Moving unet to cpu\n",
         b"Requested to load \n", b"Requested to load" + b" " * 40 + b"x\n",
         b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB\n",
         b"Tiled VAE decoding\n", b"vae: starting decode\n", b"VAE" + b"x" * 50 + b" decode\n", b"Decoding 4 latents\n",
         b"decoding 4 latent\n", b"DECODE_FIRST_STAGE\n", b"decode_first_stage\n", b"sae decode\n", b"tiled vae decoder\n",
         b" 45%|####5     | 9/20 [00:04<00:05,  2.02it/s]\n", b"x" * 900 + b"\n"]


def _text(rng, n):
    return b"".join(rng.choice(_PICK) for _ in range(n))


def _cut(rng, raw):
    """A window starts anywhere, mid-line too."""
    return raw[rng.randrange(len(raw) // 2):]


def test_loads_in_finds_what_the_pattern_finds():
    rng = random.Random(3)
    for _ in range(400):
        raw = _cut(rng, _text(rng, rng.randrange(1, 60)))
        got = [(m.start(), m.group(0)) for m in W.loads_in(raw)]
        assert got == [(m.start(), m.group(0)) for m in W._ANY_LOAD_RE.finditer(raw)]


def test_loads_in_names_each_form():
    raw = b"".join(_PICK[:14])
    names = [(m.group(1) or m.group(2) or m.group(3)).decode() for m in W.loads_in(raw)]
    # (Forge's "Loading Model: {" names no \w word: no load; "to cpu" is not the card)
    assert names == ["SDXL", "KModel", "JointTextEncoder", "QuantizedFluxModel", "disabl", "Disabl", "text encoder 2",
                     "model", "vae", "DiT", "Model"]


def test_decode_after_is_the_search():
    rng = random.Random(5)
    for _ in range(600):
        raw = _cut(rng, _text(rng, rng.randrange(1, 40)))
        pos = rng.randrange(len(raw) + 1)
        want, got = L.DECODE_RE.search(raw, pos), W.decode_after(raw, pos)
        assert (want and want.span()) == (got and got.span())


def test_decode_after_with_the_lines_known_is_the_search():
    """starts: the decod lines of raw[:n] (window_lines); raw[n:] a progress bar's line added after a newline."""
    rng = random.Random(11)
    for _ in range(600):
        raw = _cut(rng, _text(rng, rng.randrange(1, 40)))
        n = len(raw)
        if rng.random() < 0.5:
            raw += b"\n" + rng.choice([b"  0%|  | 0/4 VAE decode", b"Decoding 2 latents 10%|", b" 50%|#"])
        pos = rng.choice([0, n + 1 if len(raw) > n else n] + [i + 1 for i in range(len(raw)) if raw[i] == 10])
        starts = W.line_starts(raw[:n], W._DECOD)
        want, got = L.DECODE_RE.search(raw, pos), W.decode_after(raw, pos, starts, n)
        assert (want and want.span()) == (got and got.span())


def test_decode_after_finds_a_late_decode():
    raw = b"x" * 5000 + b"\nloaded\nTiled VAE decoding\n"
    assert W.decode_after(raw, 0).group().lower().startswith(b"tiled vae")
    assert W.decode_after(raw, raw.find(b"decoding") + 1) is None


def _scan_at(end):
    import types
    return types.SimpleNamespace(bytes_seen=0, _src=(None, end), _window_lines={})


def test_window_lines_is_line_starts_over_a_run_of_windows():
    """Failures close together, far apart, after a cut at a run's end, a window starting mid-line: each answer is what a
    fresh line_starts of that window finds."""
    rng = random.Random(7)
    for _ in range(40):
        data = _text(rng, 400)
        ends = sorted({i + 1 for i in range(len(data) - 1) if data[i] == 10 and rng.random() < 0.08})
        scan = _scan_at(0)
        for a in ends:
            raw = data[max(0, a - W.WINDOW // 8):a]
            if rng.random() < 0.1:
                raw = raw[raw.find(b"\n", rng.randrange(len(raw))) + 1:]       # a run's end cut it
            scan._src = (None, a)
            for needles in (L.WINDOW_KEYS, W._LOAD_WORDS):
                assert W.window_lines(scan, raw, needles) == W.line_starts(raw, needles)


def test_a_log_failing_on_every_line_reads_each_line_about_once(monkeypatch):
    """3000 OOMs, each its own size, one a line: all counted, and what the window reads cost stays near one pass over
    the log per needle set (it was WINDOW / line length, about 150 passes, for each set)."""
    import io
    from gpu_garden.memory.triage import engine
    line = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {}.00 MiB. GPU 0 has a total capacity of "
            "23.65 GiB of which 3.06 MiB is free. Including non-PyTorch memory, this process has 23.63 GiB memory in use. Of the "
            "allocated memory 22.90 GiB is allocated by PyTorch, and 274.61 MiB is reserved by PyTorch but unallocated.\n")
    data = "".join(line.format(20 + i) for i in range(3000)).encode()
    read = [0]
    real = W.line_starts

    def counted(block, needles, lo=0, hi=None):
        read[0] += (len(block) if hi is None else hi) - lo
        return real(block, needles, lo, hi)
    monkeypatch.setattr(W, "line_starts", counted)
    res = engine.triage_stream(io.BytesIO(data))
    assert res["count"] == 3000 and len(res["events"]) == 200
    assert read[0] < 10 * len(data), read[0] / len(data)      # 4 needle sets, ~1.7 passes each


def test_facts_of_a_repeated_line_are_its_own_and_the_cache_is_bounded():
    a = "load_tensors:        CUDA0 model buffer size = 48928.09 MiB"
    b = "load_tensors:        CUDA0 model buffer size = 1234.50 MiB"
    for _ in range(3):
        assert dict(L.facts(a))["ggml_model_buf"].group(2) == "48928.09"
        assert dict(L.facts(b))["ggml_model_buf"].group(2) == "1234.50"
    assert [n for n, _ in L.facts("nothing to see here")] == []
    for i in range(3 * L.LINE_FACTS_KEPT):
        L.facts(f"Total VRAM {i} MB, total RAM 65536 MB")
    assert len(L._LINE_FACTS) <= L.LINE_FACTS_KEPT
    assert dict(L.facts("Total VRAM 24564 MB, total RAM 65536 MB"))["total_vram"].group(1) == "24564"


def test_an_event_copy_is_a_deep_copy():
    from gpu_garden.memory.triage import scan as S
    nums = {"requested": 20971520, "free": 3208643}
    ev = {"kind": "torch.cuda", "numbers": nums, "complete": True, "device_index": 0, "ratio": 0.5, "form": None}
    got = S._event_copy(ev)
    assert got == ev and got["numbers"] is not nums
    got["numbers"]["requested"] = 1
    assert nums["requested"] == 20971520
    shared = {"kind": "x", "numbers": nums, "also": nums}
    got = S._event_copy(shared)
    assert got == shared and got["numbers"] is got["also"] and got["numbers"] is not nums     # shared as deepcopy shares it
    for odd in ({"kind": "x", "inner": [{"a": 1}]}, {"kind": "x", "deep": {"d": {"e": 1}}}):
        got = S._event_copy(odd)
        inner = next(v for k, v in odd.items() if k != "kind")
        assert got == odd and (got["inner"][0] if "inner" in odd else got["deep"]["d"]) is not (
            inner[0] if "inner" in odd else inner["d"])


def test_window_lines_in_the_scan_is_line_starts(monkeypatch):
    """Every window the scan reads back, failures on a progress bar's line included (the bar is added to the window
    after it): what window_lines answers is what a fresh line_starts of that window finds."""
    import io
    from gpu_garden.memory.triage import engine
    rng = random.Random(2)
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {}.00 MiB. GPU 0 has a total capacity of 23.65 GiB "
           "of which 3.06 MiB is free. Including non-PyTorch memory, this process has 23.63 GiB memory in use. Of the "
           "allocated memory 22.90 GiB is allocated by PyTorch, and 274.61 MiB is reserved by PyTorch but unallocated.\n")
    keys = ["Available KV cache memory: {}.61 GiB\n", "llama_kv_cache: CUDA0 KV buffer size = {}.00 MiB\n",
            "GPU KV cache size: {} tokens\n", "Epoch {}/40 train\n", "Requested to load M{}\n", "VAE decode {}\n"]
    data = "".join(((" 30%|###  | 3/10 " if rng.random() < 0.6 else "") + oom if rng.random() < 0.5 else rng.choice(keys))
                   .format(rng.randrange(20, 99999)) for _ in range(1500)).encode()
    calls = check_window_lines(monkeypatch)
    assert engine.triage_stream(io.BytesIO(data))["count"] > 300
    assert len(calls) > 1000 and all(calls)
