"""Triage round 70 (tune160, regression-tuned on batches 160 and 161: issue 14's class 7, version regressions).

llama.cpp's loader before GGUF (2023) printed "llama.cpp: loading model from <path>" as it opened a model file, then the
header it had read ("llama_model_load_internal: format = ggjt v2", n_vocab, ...). A std::bad_alloc between the two came
while the header was read: a length read wrong from a file in a format the build does not read (ggml-org/llama.cpp#1538:
a q4_1 file made before PR #1508 changed the Q4_0/Q4_1/Q8_0 layouts), not RAM. Lines written from llama.cpp's own
format (main's build and seed lines, the loader's lines, libstdc++'s terminate message), not copied from the corpus case."""
from support.triage_event import top

HEAD = ("main: build = 612 (7e4ea5b)\n"
        "main: seed  = 1685112004\n"
        "llama.cpp: loading model from ./models/vicuna-13b-1.1.ggml.q5_1.bin\n")
THROW = "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n"
# what the loader prints once it has read the header (kept to lines without the scanner's other words: no "model size")
HEADER = ("llama_model_load_internal: format     = ggjt v1 (pre #1405)\n"
          "llama_model_load_internal: n_vocab    = 32000\n"
          "llama_model_load_internal: n_layer    = 40\n")


def test_loader_line_names_llama_cpp():
    """The runtime marker row: without it the bare bad_alloc is read as PyTorch's."""
    _, _, ev = top(HEAD + THROW)
    assert ev["runtime"] == "llama.cpp", ev["runtime"]


def test_bad_alloc_while_reading_the_header_is_the_file_not_ram():
    cause, scores, ev = top(HEAD + THROW)
    assert cause == "other", scores
    assert scores["other"] > 2 * scores.get("host-ram", 0), scores
    said = ev["causes"][0]["evidence"][0]
    assert "header" in said and "build 612" in said and "format" in said, said


def test_the_file_format_guide_is_shown():
    _, _, ev = top(HEAD + THROW)
    assert "llamacpp-file-format" in [f["id"] for f in ev["guide"]["faqs"]], ev["guide"]["faqs"]


def test_bad_alloc_after_the_header_was_read_stays_ram():
    """Once the loader printed what it read (the fact ggml_header's second group, found by its own scan anchor), a
    bad_alloc is the load's own memory: host-ram, no file-format reading."""
    cause, scores, ev = top(HEAD + HEADER + THROW)
    assert cause == "host-ram", scores
    assert "llamacpp-file-format" not in [f["id"] for f in ev["guide"]["faqs"]]


def test_loading_line_must_start_the_line():
    """Quoted in prose ("it says llama.cpp: loading model from ..."), the words name nothing."""
    _, _, ev = top("the console said that llama.cpp: loading model from x.bin hung\n" + THROW)
    assert ev["runtime"] != "llama.cpp", ev["runtime"]
