"""Triage round 121 (batch 648): message forms written by hand from the runtimes' own wording, with the expected values
worked out by hand.

1. ds4's model-arena refusal of one named tensor gives its size as "(N MiB request)": read as the request, as the arena's
   "(N MiB chunk)" was.
2. Ollama's GPU discovery record ("inference compute" with id= and library=, or cut to "inference compute id=cpu") marks
   the log Ollama's; listing the CPU right after a CUDA out-of-memory error, it says discovery found the card already held
   (other-process)."""
from support.regex_time import assert_each_fast
from support.triage_event import read, top
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.fact_patterns import FACTS
from gpu_garden.memory.triage.other_patterns import DS4_CHUNK

M = 1 << 20
COMPUTE = dict(FACTS).get("ollama_compute")

# 1. ds4's arena refusing one named tensor, its size given as the request
DS4_REQUEST = ("ds4: CUDA model arena alloc failed for attn_kv_b (640.00 MiB request): out of memory\n"
               "ds4: CUDA end commands failed: an illegal memory access was encountered\n")


def test_ds4_arena_request_read():
    cause, kind, runtime, device, nums = read(DS4_REQUEST)
    assert (kind, runtime, device) == ("ds4.alloc", "ds4", "cuda")
    assert nums.get("requested") == 640 * M
    assert cause == "weights-exceed-vram"


def test_ds4_arena_chunk_still_read_and_other_words_not():
    _, _, _, _, nums = read("ds4: ROCm model arena alloc failed for tensor-span:7 (2048.00 MiB chunk): out of memory\n")
    assert nums.get("requested") == 2048 * M
    # a parenthesis that is neither the chunk's nor the request's gives no request
    _, _, _, _, nums = read("ds4: ROCm model arena alloc failed for moe_up (2048.00 MiB total): out of memory\n")
    assert "requested" not in nums


# 2. Ollama's discovery: a CUDA out-of-memory error, then the CPU listed as its compute
DISCOVERY_CUT = "CUDA error: out of memory\ninference compute id=cpu\n"
DISCOVERY_SLOG = ('time=2026-07-01T10:00:00.000Z level=WARN source=runner.go:120 msg="failure during GPU discovery" '
                  'error="CUDA error: out of memory"\n'
                  'time=2026-07-01T10:00:01.000Z level=INFO source=types.go:42 msg="inference compute" id=0 library=cpu '
                  'compute="" name=cpu total="119.7 GiB" available="40.2 GiB"\n')


def test_discovery_to_cpu_reads_other_process_under_ollama():
    cause, conf, ev = top(DISCOVERY_CUT)
    assert (ev["runtime"], ev["device_kind"]) == ("ollama", "cuda")
    assert cause == "other-process"
    assert conf["other-process"] > conf.get("other", 0)


def test_discovery_slog_form_read_too():
    cause, _, ev = top(DISCOVERY_SLOG)
    assert ev["runtime"] == "ollama"
    assert cause == "other-process"


def test_discovery_keeping_the_gpu_or_before_the_error_is_not_read():
    # discovery that kept the GPU: no fall-back to the CPU, Ollama's estimate row stays first
    cause, _, ev = top("CUDA error: out of memory\ninference compute id=GPU-5a1e library=cuda\n")
    assert ev["runtime"] == "ollama" and cause != "other-process"
    # a CPU record before the error belongs to an earlier discovery, not this failure's
    cause, _, _ = top("inference compute id=cpu\nCUDA error: out of memory\n")
    assert cause != "other-process"
    # a CPU record far after the error (past the span) is not its outcome
    cause, _, _ = top("CUDA error: out of memory\n" + "waiting\n" * 20 + "inference compute id=cpu\n")
    assert cause != "other-process"


def test_compute_record_fields():
    m = COMPUTE.search('msg="inference compute" id=0 library=cpu compute=""')
    assert m and (m.group(1), m.group(2)) == ("0", "cpu")
    m = COMPUTE.search("inference compute id=cpu")
    assert m and m.group(1) == "cpu" and m.group(2) is None
    assert COMPUTE.search("the inference compute budget was 4 GiB") is None


def test_compute_record_marks_log_ollama_only_with_its_fields():
    # prose naming "inference compute" without the record's id= field leaves the runtime as before
    res = engine.triage_text("CUDA error: out of memory\nour inference compute was the CPU\n")
    assert res["events"][res["headline"]]["runtime"] != "ollama"


def test_round121_patterns_linear():
    n = 1 << 20
    assert_each_fast([
        (DS4_CHUNK.search, ["(" + "1" * n, "(" + "1." * (n // 2) + " MiB x", "(1 MiB " * (n // 7)]),
        (COMPUTE.search, ["inference compute id=" + "x" * n, 'inference compute" id=' * (n // 22),
                          "inference compute id=a library=" + "c" * n, "inference compute id=" + "a " * (n // 2)]),
        (engine.triage_text, ["CUDA error: out of memory\n" + "inference compute id=cpu\n" * (n // 25)]),
    ])
