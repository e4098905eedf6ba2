"""Triage after batches 158 and 159 (round 69): Metal's API-validation assertion on one buffer over the per-buffer maximum
("newBufferWith*:length 0x... must not exceed N MB"), and the shell's "Killed" kept a record of its own when a short paste
looks wrapped (found by tune141). Paths, models, sizes and lengths made up (modelled on ggml-org/llama.cpp#6861 and on
llama.cpp's converter logs such as ggml-org/llama.cpp#138); expected values by hand."""
from gpu_garden.memory.triage import engine, paste
from gpu_garden.memory.triage.scan import _reads_better
from support.triage_event import top

# --- Metal's validation layer: one buffer over the per-buffer cap -------------------------------------------------------
METAL_HEX = ("-[MTLDebugDevice newBufferWithLength:options:]:670: failed assertion `Buffer Validation\n"
             "newBufferWith*:length 0x9c000000 must not exceed 2048 MB.\n")
METAL_DEC = ("-[MTLDebugDevice newBufferWithBytesNoCopy:length:options:deallocator:]:700: failed assertion `Buffer Validation\n"
             "newBufferWith*:length 3221225472 must not exceed 3072 MB.\n")


def test_metal_validation_buffer_over_cap_is_other_on_metal():
    """Before round 69 the assertion's second line was no failure (2 lines read, none found). One buffer over Metal's
    per-buffer maximum, no total shown: a cap (R5), other; the device is Metal and, with no runtime named, ggml's backend."""
    cause, causes, ev = top(METAL_HEX)
    assert (ev["kind"], ev["device_kind"], ev["runtime"], cause) == ("metal.max_buffer", "metal", "llama.cpp", "other"), causes
    assert ev["numbers"]["requested"] == 0x9c000000 == 2617245696
    assert ev["numbers"]["limit"] == 2048 * 1024 * 1024
    assert "per-buffer" in ev["causes"][0]["evidence"][0]


def test_metal_validation_decimal_length_and_guide():
    res = engine.triage_text(METAL_DEC)
    ev = res["events"][-1]
    assert (res["cause"], ev["numbers"]["requested"], ev["numbers"]["limit"]) == ("other", 3221225472, 3072 * 1024 * 1024)
    assert ev["guide"]["id"] == "metal-max-buffer", ev.get("guide")


def test_metal_validation_names_ollama_when_the_log_does():
    cause, causes, ev = top("time=2025-01-02T10:00:00 level=INFO source=server.go:376 msg=\"starting llama server\" cmd=\"/usr/local/bin/ollama runner\"\n"
                            + METAL_HEX)
    assert (ev["runtime"], cause) == ("ollama", "other"), (ev["runtime"], causes)


# --- "Killed" after a short paste that reads as wrapped ------------------------------------------------------------------
# two lines of almost the same width make the text look textwrapped: before round 69 "Killed" was joined onto the line above
CONVERT_KILLED = ("python3 convert.py models/30B/ --outtype f16\n"
                  "Loading model file models/30B/pytorch_model.bin\n"
                  "Killed\n")
ZSH_KILLED = ("python3 convert.py models/30B/ --outtype q8_0\n"
              "Loading model file models/30B/pytorch_model.bin\n"
              "zsh: killed     python3 convert.py models/30B/\n")


def test_lone_killed_line_stays_its_own_record():
    out = paste.undo(CONVERT_KILLED.encode(), _reads_better)
    assert b"\nKilled" in out, out
    cause, causes, ev = top(CONVERT_KILLED)
    assert (ev["kind"], cause, ev["device_kind"]) == ("os.oom_killer", "host-ram", "cpu"), causes


def test_shell_killed_notice_stays_its_own_record():
    out = paste.undo(ZSH_KILLED.encode(), _reads_better)
    assert b"\nzsh: killed" in out, out

