"""Review 19a's triage findings: each test failed before its fix."""
import io
import subprocess
import sys

import pytest

from gpu_garden.memory import cli

OOM_LOG = (b"loading model\n"
           b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
           b"11.76 GiB of which 10.69 MiB is free.\n")


class _Trickle(io.RawIOBase):
    """A pipe whose writer sent one byte, then the rest: the first read returns one byte."""

    def __init__(self, data):
        self._parts = [data[:1], data[1:]]

    def readable(self):
        return True

    def readinto(self, b):
        if not self._parts:
            return 0
        part = self._parts[0][:len(b)]
        self._parts[0] = self._parts[0][len(part):]
        if not self._parts[0]:
            self._parts.pop(0)
        b[:len(part)] = part
        return len(part)


def _stdin(monkeypatch, data):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(_Trickle(data))))


def test_compressed_standard_input_that_arrives_a_byte_first_is_refused(monkeypatch, capsys):
    import gzip
    _stdin(monkeypatch, gzip.compress(OOM_LOG))
    assert cli.main(["triage", "-"]) == 2
    assert "standard input is gzip-compressed" in capsys.readouterr().err


def test_utf16_standard_input_that_arrives_a_byte_first_is_read(monkeypatch, capsys):
    _stdin(monkeypatch, b"\xff\xfe" + OOM_LOG.decode().replace("\n", "\r\n").encode("utf-16-le"))
    assert cli.main(["triage", "-"]) == 0
    assert "line 2" in capsys.readouterr().out


def test_text_standard_input_that_arrives_a_byte_first_keeps_its_first_byte(monkeypatch, capsys):
    import json
    _stdin(monkeypatch, OOM_LOG.split(b"\n", 1)[1])
    assert cli.main(["triage", "--json", "-"]) == 0
    event = json.loads(capsys.readouterr().out)["events"][0]
    assert event["line"] == 1 and event["message"].startswith("torch.OutOfMemoryError: CUDA out of memory.")


def test_closed_standard_input_is_a_clear_error(monkeypatch, capsys):
    # `gpu-garden triage <&-`: Python sets sys.stdin to None; before, AttributeError: 'NoneType' has no attribute 'buffer'
    monkeypatch.setattr("sys.stdin", None)
    assert cli.main(["triage", "-"]) == 2
    err = capsys.readouterr().err
    assert "standard input is closed" in err and "Traceback" not in err


def _triage(text):
    from gpu_garden.memory.triage import engine
    return engine.triage_text(text)


@pytest.mark.parametrize("advice", [
    "INFO: to avoid MPS backend out of memory errors, set PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0\n",
    "Tip: MPS backend out of memory? Lower the batch size.\n",
])
def test_advice_naming_the_mps_message_is_no_oom(advice):
    # 1336485 took any line holding the phrase for MPS's OOM: "activations 67%, mps" from a hint line
    res = _triage("loading model\n" + advice + "done\n")
    assert not res["found"], res["events"]


def test_mps_message_cut_in_its_middle_is_still_read():
    res = _triage("RuntimeError: MPS backend out of memory (MPS allocated: 8.23 GiB ... max allowed: 8.00 GiB)\n")
    assert res["found"]
    ev = res["events"][-1]
    assert ev["device_kind"] == "mps" and ev["numbers"]["allocated"] == round(8.23 * 2**30), ev["numbers"]


def test_mps_field_labels_are_spelled_once():
    # review 19a finding 7: MPS and MPS_FIELDS spelled each label twice; both now come from MPS_LABELS
    import re
    from gpu_garden.memory.triage import error_patterns as RX
    assert set(RX.MPS_FIELDS) == set(RX.MPS_LABELS)
    for key, label in RX.MPS_LABELS.items():
        assert RX.MPS_FIELDS[key].pattern.startswith(re.escape(label)), key
        assert re.escape(label) in RX.MPS.pattern, key
    line = ("RuntimeError: MPS backend out of memory (MPS allocated: 17.68 GiB, other allocations: 1.06 GiB, max allowed: "
            "18.13 GiB). Tried to allocate 512.00 MiB on private pool.\n")
    nums = _triage(line)["events"][-1]["numbers"]
    assert (nums["allocated"], nums["other_allocations"], nums["max_allowed"], nums["requested"]) == (
        round(17.68 * 2**30), round(1.06 * 2**30), round(18.13 * 2**30), 512 * 2**20), nums


@pytest.mark.parametrize("req,expect", [("12.00", "other"), ("16.50", "activations"), ("30.00", "activations"),
                                        ("70.00", "activations"), ("200.00", "activations"), ("260.00", "other")])
def test_xpu_cap_reads_only_a_request_the_device_would_hold(req, expect):
    """Review 19a finding 2: XPU_OVER_CARD = 4 read 30 GiB on a 15.56 GiB XPU as the tensor and 70 GiB as the 4 GiB cap.
    One line (docs/triage-causes.md R5): up to the device's total, the cap; over it, the tensor, up to case.ABSURD_REQUEST
    (16x = 248.96 GiB here), past which a size computed wrong (other, not the cap)."""
    res = _triage(f"XPU out of memory. Tried to allocate {req} GiB. GPU 0 has a total capacity of 15.56 GiB of which "
                  "14.01 GiB is free.\n")
    ev = res["events"][-1]
    assert res["cause"] == expect, ev["causes"]
    cap = any("4 GiB" in e for c in ev["causes"][:1] for e in c["evidence"])
    assert cap == (float(req) <= 15.56), ev["causes"]


def _gb10(total, this_process="52.68 GiB"):
    return ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of "
            f"{total} GiB of which 527.23 MiB is free. Including non-PyTorch memory, this process has {this_process} memory "
            "in use.\n")


@pytest.mark.parametrize("total", ["119.18", "119.70", "121.63"])
def test_gb10_pool_outside_the_process_shows_host_memory_and_a_second_program(total):
    """Review 19a finding 1: UNIFIED_POOLS covered 119.0-119.8 GiB only, while an ASUS GX10 (a GB10, unseen batch 50) prints
    121.63 GiB; and NVML names no process on a GB10, so the message cannot tell host memory from a second server: both
    are shown as a pair."""
    res = _triage(_gb10(total))
    assert res["cause"] == "host-ram", res["events"][-1]["causes"]
    assert res["uncertain"] and res["pair"], res
    assert [a["id"] for a in res["alternatives"]] == ["host-ram", "other-process"], res["alternatives"]
    ev = " ".join(res["alternatives"][0]["evidence"])
    assert "GB10" in ev and "second program" in ev, ev


def test_gb10_totals_come_from_the_card_table():
    from gpu_garden.memory.llm import cards
    from gpu_garden.memory.llm.runtimes import vllm
    assert cards.unified_by_total(121.63 * 2**30) == cards.unified_by_name("NVIDIA GB10") == "NVIDIA GB10"
    assert cards.unified_by_total(79.25 * 2**30) is None and cards.unified_by_total(139.8 * 2**30) is None
    assert cards.unified_by_name("NVIDIA H100 80GB HBM3") is None
    assert not hasattr(vllm, "NVML_NO_MEMORY")   # one table: vLLM's NVML check reads cards.UNIFIED too


def test_triage_modules_stay_under_600_lines():
    # review 19a finding 6: other_runtimes.py was 623 lines; its XLA family moved to xla_runtimes.py, re-exported
    from pathlib import Path
    from gpu_garden.memory.triage import other_runtimes, xla_runtimes
    pack = Path(other_runtimes.__file__).parent
    long = {p.name: n for p in pack.glob("*.py") if (n := len(p.read_text(encoding="utf-8").splitlines())) >= 600}
    assert long == {}, long
    assert other_runtimes.xla is xla_runtimes.xla and other_runtimes.BFC is xla_runtimes.BFC


@pytest.mark.parametrize("text", [
    "RuntimeError: MPS backend out of memory\n",
    "RuntimeError: MPS backend out of memory\n(MPS allocated: 17.68 GiB, other allocations: 1.06 GiB, max allowed: 18.13 GiB). "
    "Tried to allocate 512.00 MiB on private pool.\n",
    "Error: MPS backend out of memory. Restarting the worker.\n",
])
def test_mps_message_stopped_or_wrapped_after_its_words_is_still_mps(text):
    # the strict form of the finding-3 fix read these as a CUDA failure ("other", cuda): the message, cut or wrapped at its
    # words, is still MPS's
    res = _triage(text)
    assert res["found"] and res["events"][-1]["device_kind"] == "mps", res["events"]
