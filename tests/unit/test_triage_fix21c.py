"""Task fix21c (review21b findings on triage). Lines written from the runtimes' own messages, names and numbers made up,
expected values by hand."""
from support.triage_event import top

GIB = 1 << 30


def test_mtplx_required_is_the_printed_resident_figure_and_the_headroom_its_own_number():
    """review21b finding 6: "at least A resident plus H system headroom is required": required = A as printed (what a
    label declares), headroom = H; the evidence names both and their sum (before: required A + H)."""
    _, _, ev = top("RuntimeError: Qwen4-70B cannot load inside the available Metal memory budget; at least 83.3 GiB "
                   "resident plus 16 GiB system headroom is required\n")
    assert abs(ev["numbers"]["required"] - 83.3 * GIB) < 0.01 * GIB, ev["numbers"]
    assert ev["numbers"]["headroom"] == 16 * GIB, ev["numbers"]
    text = ev["causes"][0]["evidence"][0]
    assert "83.30 GiB resident plus 16.00 GiB headroom = 99.30 GiB" in text, text
    # without a headroom clause there is no headroom number
    _, _, ev = top("RuntimeError: Qwen4-70B cannot load inside the available Metal memory budget; at least 83.3 GiB "
                   "resident is required\n")
    assert "headroom" not in ev["numbers"], ev["numbers"]


# tune88's Ollama slog case: a server line, then the runner's ggml lines (numbers made up)
GGML = ("load_tensors: offloaded 41/41 layers to GPU\n"
        "load_tensors:        CUDA0 model buffer size =  9120.33 MiB\n"
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2048.00 MiB on device 0: cudaMalloc failed: out of memory\n")


def test_ollama_slog_needs_an_ollama_only_file_name_or_a_second_marker():
    """review21b finding 7: routes.go, memory.go, images.go and gpu_*.go are names any Go service may log under; one such
    line is a Go wrapper of llama-server as much as Ollama (before: runtime ollama)."""
    for line in ('level=INFO source=routes.go:88 msg="proxying to llama-server" upstream=http://127.0.0.1:8081',
                 'level=INFO source=memory.go:40 msg="checking free memory before starting llama-server"',
                 'level=INFO source=gpu_linux.go:12 msg="found a device"'):
        _, _, ev = top("time=2026-04-02T09:12:44.101Z " + line + "\n" + GGML)
        assert ev["runtime"] == "llama.cpp", (line, ev["runtime"])
    # two of Ollama's own common names (its server's routes.go and llm/memory.go) together still name it
    both = ('time=2026-04-02T09:12:40.000Z level=INFO source=routes.go:1205 msg="inference compute" id=GPU-0 library=cuda\n'
            'time=2026-04-02T09:12:44.101Z level=INFO source=memory.go:343 msg="offload to cuda" layers.requested=-1\n')
    _, _, ev = top(both + GGML)
    assert ev["runtime"] == "ollama", ev["runtime"]
    # an Ollama-only name alone is enough
    _, _, ev = top('time=2026-04-02T09:12:44.101Z level=INFO source=sched.go:449 msg="loading model into llama-server" gpus=1\n' + GGML)
    assert ev["runtime"] == "ollama", ev["runtime"]


def test_attempt_misses_only_a_figure_that_is_no_number():
    """review21b finding 8: text.attempt reads a SizeError (a figure that is no number) as no match; any other exception,
    a bug of a recogniser or handler (a bad unpack, int() of a group made optional), surfaces (before: every ValueError
    was a silent miss)."""
    import pytest
    from gpu_garden.memory.triage.text import attempt, num, size
    from gpu_garden.memory.units import SizeError
    assert attempt(size, "8..7 GiB", miss="miss") == "miss"
    assert attempt(num, "0..99", miss="miss") == "miss"
    assert issubclass(SizeError, ValueError)

    def unpack(line):
        a, b = line.split()
        return a
    with pytest.raises(ValueError, match="too many values to unpack"):
        attempt(unpack, "one two three")
    with pytest.raises(ValueError, match="invalid literal"):
        attempt(int, "12a")


def test_ds4_guard_figures_are_all_read_before_the_event_is_touched(monkeypatch):
    """review21b finding 8: add_block_fields set required/limit/total before it read the fraction; a fraction that is no
    number left them written and returned the miss. Now nothing is written."""
    from gpu_garden.memory.triage import servers
    from gpu_garden.memory.triage.text import attempt
    from gpu_garden.memory.units import SizeError

    def bad(text):
        raise SizeError(f"not a number: {text!r}")
    monkeypatch.setattr(servers, "num", bad)
    ev = {"kind": "ds4.memory_guard", "numbers": {}}
    line = ("ds4:   required model+graph: 92.10 GiB; guard budget: 80.00 GiB (base 256.00 GiB, fraction 0.5, "
            "reserve 16.00 GiB)")
    assert attempt(servers.add_block_fields, ev, line, miss=False) is False
    assert ev == {"kind": "ds4.memory_guard", "numbers": {}}, ev
