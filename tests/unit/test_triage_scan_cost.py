"""The wrapped-message join is not a per-line loop for lines that only look like a cut message: a line ending in
cudaMallocAsync's "Allocation on device N" is joined only with its own second half ("would exceed allowed memory"),
so a log of such lines costs a bounded number of recognitions per line (counted, not timed)."""
from gpu_garden.memory.triage import engine, scan


def _count_recognise(monkeypatch):
    calls = [0]
    real = scan.P.recognise

    def counted(text):
        calls[0] += 1
        return real(text)
    monkeypatch.setattr(scan.P, "recognise", counted)
    return calls


def test_bare_allocation_lines_are_not_joined_with_what_follows(monkeypatch):
    calls = _count_recognise(monkeypatch)
    n = 200
    engine.triage_text("".join(f"Allocation on device {i % 2}\nstep {i} done\n" for i in range(n)))
    # without the guard each such line ran the join loop: up to five joined re-recognitions on top of its own
    assert calls[0] <= 2 * (2 * n), calls[0]


def test_the_split_message_is_still_joined():
    r = engine.triage_text("Allocation on device 1\nwould exceed allowed memory. (out of memory)\n"
                           "Currently allocated     : 3.20 GiB\nRequested               : 512.00 MiB\n"
                           "Device limit            : 3.81 GiB\nFree (according to CUDA): 0 bytes\n")
    ev = r["events"][-1]
    assert r["found"] and ev["device_index"] == 1 and ev["numbers"]["requested"] == 512 * 2**20


def test_repeated_cut_phrases_do_not_join_each_other(monkeypatch):
    # vLLM's max-seq-len message cut after "larger than", repeated: each line is a new message, not the rest of the last
    calls = _count_recognise(monkeypatch)
    n = 200
    engine.triage_text("".join("ValueError: The model's max seq len (4096) is larger than\n" for _ in range(n)))
    assert calls[0] <= 2 * n, calls[0]


def test_a_message_cut_between_two_of_its_phrases_is_still_joined():
    # vLLM's start-up check wrapped after its first clause: "max seq len" and "KV cache is needed" are both cut phrases,
    # but different ones: the second line is the rest of the message (its length 32768 is read), not a new message
    r = engine.triage_text("ValueError: To serve at least one request with the model's max seq len (32768),\n"
                           "4.00 GiB KV cache is needed, which is larger than the available KV cache memory (3.50 GiB).\n")
    assert r["events"][-1]["numbers"]["max_model_len_tokens"] == 32768
