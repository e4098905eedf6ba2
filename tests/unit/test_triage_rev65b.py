"""Review rev65b of tri79 (nvidia-smi's process table) and tri81 (a free figure worked out from the reserved one): the
reviewer's reproductions (/tmp/rev65b, rev65b_test_findings.py and rev65b_test_wddm_cannot_fail.py) as unit tests, each
asserting the right answer, with the controls that keep the mends from reading too much. Inputs written by hand in the tools'
own formats; none taken from a corpus file. Finding 5 (ComfyUI's pinned-memory reading overridden by a same-card desktop)
was argued, not proven, and is left as tri79 reads it."""
import re

import pytest

import test_triage_tri79 as T
from support.triage_event import top

MiB, GiB = 1 << 20, 1 << 30

# ---- F1: the failure's device index is CUDA's, not nvidia-smi's ------------------------------------------------------
GT = T.gpu_table(("GeForce RTX 3060", 1760, 12288), ("GeForce RTX 3060", 12050, 12288))
ROWS = [(0, 1501, "G", "/usr/lib/xorg/Xorg", 420), (0, 1630, "G", "/usr/bin/gnome-shell", 300),
        (0, 40211, "G", "/opt/browser/browser --type=gpu", 980), (1, 52310, "C", "python", 12040)]
COMFY = ("Set cuda device to: 1\n"                     # ComfyUI main.py:40-44: --cuda-device 1 sets CUDA_VISIBLE_DEVICES=1
         "Total VRAM 12288 MB, total RAM 64216 MB\n"
         "pytorch version: 2.9.1+cu128\n"
         "Set vram state to: NORMAL_VRAM\n"
         "Device: cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync\n"     # the card is cuda:0 to the program now
         "got prompt\n"
         "!!! Exception during processing !!! CUDA error: out of memory\n"
         "Traceback (most recent call last):\n"
         '  File "/home/u/ComfyUI/execution.py", line 510, in execute\n'
         "torch.AcceleratorError: CUDA error: out of memory\n"
         "Search for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\n"
         "\nPrompt executed in 12.31 seconds\n")


def test_f1_comfyui_cuda_device_1_desktop_on_the_other_card():
    # fails on tri79's rules: cuda:0 was read as nvidia-smi's GPU 0, where the desktop is; the run is on GPU 1
    cause, conf, _ = top(COMFY + "\n$ nvidia-smi\n" + GT + T.procs_table(*ROWS))
    assert cause != "other-process", conf


def test_f1_cuda_visible_devices_on_the_command_line():
    log = "$ CUDA_VISIBLE_DEVICES=1 ./trainer --config big.yml\n" + T.CPP_OOM
    cause, conf, _ = top(log + "\n$ nvidia-smi\n" + GT + T.procs_table(*ROWS))
    assert cause != "other-process", conf


def test_f1_the_compute_rows_card_is_read_whatever_its_index():
    # the program's compute row is on nvidia-smi's GPU 1 alone, and the desktop is there too: that card is read
    rows = [(0, 1501, "G", "/usr/lib/xorg/Xorg", 4)] + [(1, pid, t, name, mib) for _g, pid, t, name, mib in T.DESKTOP_4GB]
    gt = T.gpu_table(("Quadro P1000", 10, 4036), ("Quadro P1000", 3610, 4036))
    cause, conf, ev = top(T.CPP_OOM + "\n$ nvidia-smi\n" + gt + T.procs_table(*rows))
    assert cause == "other-process", conf
    assert "1.87 GiB" in " ".join(next(c for c in ev["causes"] if c["id"] == cause)["evidence"])     # 470 + 390 + 1050 MiB


def test_f1_two_programs_on_two_cards_are_not_read():
    # control: the compute rows are two processes', one a card: which one failed is not clear, so no card is read
    rows = T.DESKTOP_4GB + [(1, 1501, "G", "/usr/lib/xorg/Xorg", 4), (1, 52999, "C", "./trainer", 1700)]
    gt = T.gpu_table(("Quadro P1000", 3610, 4036), ("Quadro P1000", 1704, 4040))
    cause, conf, _ = top(T.CPP_OOM + gt + T.procs_table(*rows))
    assert cause != "other-process", conf


def test_f1_one_program_unequal_on_two_cards_is_not_read():
    # control: one process, but 1700 and 3000 MiB: no replicas (the same work a card), so no card is read
    rows = T.DESKTOP_4GB + [(1, 1501, "G", "/usr/lib/xorg/Xorg", 4), (1, 52310, "C", "./trainer", 3000)]
    gt = T.gpu_table(("Quadro P1000", 3610, 4036), ("Quadro P1000", 3004, 4040))
    cause, conf, _ = top(T.CPP_OOM + gt + T.procs_table(*rows))
    assert cause != "other-process", conf


def test_f1_no_compute_row_one_card_is_read():
    # the program has ended (no compute row); the table and the GPU table show one card: it is the one that failed
    rows = [r for r in T.DESKTOP_4GB if r[2] == "G"]
    cause, conf, _ = top(T.CPP_OOM + "\n$ nvidia-smi\n" + T.gpu_table(("Quadro P1000", 1910, 4036)) + T.procs_table(*rows))
    assert cause == "other-process", conf


def test_f1_no_compute_row_two_printed_cards_is_not_read():
    # control: the same rows, but nvidia-smi's GPU table shows two cards: the run may have been on the other one
    rows = [r for r in T.DESKTOP_4GB if r[2] == "G"]
    gt = T.gpu_table(("Quadro P1000", 1910, 4036), ("Quadro P1000", 4000, 4036))
    cause, conf, _ = top(T.CPP_OOM + "\n$ nvidia-smi\n" + gt + T.procs_table(*rows))
    assert cause != "other-process", conf


# ---- F2: nvidia-smi >= 570's table: a PID of 3 digits or fewer was no row, and ended the table ------------------------
HEAD570 = ("+-----------------------------------------------------------------------------------------+\n"
           "| Processes:                                                                              |\n"
           "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
           "|        ID   ID                                                               Usage      |\n"
           "|=========================================================================================|\n")
END = "+-----------------------------------------------------------------------------------------+\n"


def row570(g, pid, t, name, mib):       # the 570+ layout: PID right-aligned in a 16-wide field after CI's "N/A"
    return f"|{g:>5}   N/A  N/A{pid:>16}{t:>7}   {name:<37}{str(mib) + 'MiB':>8} |\n"


def test_f2_layout_reads_with_four_digit_pids():      # control: passed before the mend too
    cause, conf, _ = top(T.CPP_OOM + HEAD570 + "".join(row570(*r) for r in T.DESKTOP_4GB) + END)
    assert cause == "other-process", conf


def test_f2_three_digit_pid_row_ends_the_table():
    rows = [T.DESKTOP_4GB[3], (0, 964, "G", "/usr/lib/xorg/Xorg", 470)] + T.DESKTOP_4GB[1:3]
    cause, conf, _ = top(T.CPP_OOM + HEAD570 + "".join(row570(*r) for r in rows) + END)
    assert cause == "other-process", conf


def test_f2_row_regex_alone():
    from gpu_garden.memory.triage.smi_procs import ROW
    assert ROW.match(row570(0, 3170, "G", "/usr/lib/xorg/Xorg", 470).strip())
    assert ROW.match(row570(0, 964, "G", "/usr/lib/xorg/Xorg", 470).strip())
    assert ROW.match(row570(0, 7, "G", "/usr/lib/xorg/Xorg", 470).strip())


def test_f2_a_row_not_read_is_skipped_not_the_tables_end():
    # a line inside the table that is no row this reader knows (here a row cut before its memory column) is skipped;
    # the rows after it are still read. Fails on tri79's reader: it ended the table there
    cut = "|    0   N/A  N/A      2210      G   /usr/bin/some-very-long-process-name-cut-off-here\n"
    body = "".join(row570(*r) for r in T.DESKTOP_4GB[3:]) + cut + "".join(row570(*r) for r in T.DESKTOP_4GB[:3])
    cause, conf, _ = top(T.CPP_OOM + HEAD570 + body + END)
    assert cause == "other-process", conf


def test_f2_the_border_ends_the_table():
    # control: rows after the table's border (another listing's) are not read as the table's
    after = "".join(row570(*r) for r in T.DESKTOP_4GB[:3])
    cause, conf, _ = top(T.CPP_OOM + HEAD570 + row570(*T.DESKTOP_4GB[3]) + END + "some other listing\n" + after)
    assert cause != "other-process", conf


# ---- F3: PyTorch >= 2.8's XPU message prints total - reserved as "free" where the device reports no free memory --------
NEW_XPU = ("torch.OutOfMemoryError: XPU out of memory. Tried to allocate 130.00 MiB. GPU 0 has a total capacity of 15.00 GiB "
           "of which {free} is free. Of the allocated memory 11.00 GiB is allocated by PyTorch, and 204.80 MiB is reserved "
           "by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.\n")


def test_f3_torch_xpu_new_form_estimated_free_is_tri81s_case():
    # 15.00 GiB - (11.00 GiB + 204.80 MiB) = 3.80 GiB: the worked-out figure, 75 % of the card reserved. Fails on tri81's
    # rules: the stated figure always counted as room, so the refusal reading (other) answered
    cause, conf, _ = top(NEW_XPU.format(free="3.80 GiB"))
    assert cause == "activations", conf      # what tri81 answers for the same figures in IPEX's bracket form


def test_f3_within_the_print_rounding_too():
    # 3.79 GiB: 10 MiB under total - reserved, within what three figures printed to 0.01 GiB can be off
    cause, conf, _ = top(NEW_XPU.format(free="3.79 GiB"))
    assert cause == "activations", conf


def test_f3_a_free_figure_the_device_reported_still_counts():
    # control: 3.50 GiB free, 300 MiB under total - reserved: the driver's own figure (ext_intel_free_memory), which stands as
    # room; 130 MiB refused beside it is the platform's refusal, as before
    cause, conf, _ = top(NEW_XPU.format(free="3.50 GiB"))
    assert cause == "other", conf


def test_f3_cuda_free_figure_is_never_read_as_worked_out():
    from gpu_garden.memory.triage.case import free_worked_out
    n = {"free": 4080218931, "reserved": 12025908429}
    assert free_worked_out(n, 15 * GiB, "torch.xpu")
    assert not free_worked_out(n, 15 * GiB, "torch.cuda")        # CUDA's free figure is cudaMemGetInfo's, always
    assert not free_worked_out(dict(n, free=n["free"] - 40 * MiB), 15 * GiB, "torch.xpu")
    assert free_worked_out({"reserved": 12025908429}, 15 * GiB, "torch.xpu")     # no free figure: worked out


# ---- F4: tri81's answer stood beside evidence that stated the worked-out figure as free ------------------------------
def _said(ev, cause):
    return [e for c in ev["causes"] if c["id"] == cause for e in c["evidence"]]


def test_f4_ipex_activations_evidence_states_the_worked_out_figure_as_free():
    ipex = ("RuntimeError: XPU out of memory. Tried to allocate 130.00 MiB (GPU 0; 15.00 GiB total capacity; 11.00 GiB already "
            "allocated; 11.20 GiB reserved in total by PyTorch)\n")
    cause, _conf, ev = top(ipex)
    said = _said(ev, cause)
    assert cause == "activations"
    assert not any("3.80 GiB free" in e for e in said), said     # the message states no free figure
    assert any("the message gives no free figure" in e for e in said), said


def test_f4_new_xpu_form_evidence_says_the_figure_is_worked_out():
    cause, _conf, ev = top(NEW_XPU.format(free="3.80 GiB"))
    said = _said(ev, cause)
    assert not any("3.80 GiB free" in e for e in said), said
    assert any("total less PyTorch's reserved" in e for e in said), said


# ---- tri79's WDDM control could not fail (its rows were "C+G", never counted whatever their figure) -------------------
def _broken_reader(monkeypatch):
    """The N/A handling broken on purpose (the reviewer's mutation): each N/A row read as holding 8 GiB."""
    from gpu_garden.memory.triage import facts, smi_procs
    na_row = re.compile(r"^\|\s+(?P<gpu>\d+)\s+N/A\s+N/A\s+(?P<pid>\d+)\s+(?P<type>C\+G|C|G)\s.*N/A\s*\|$")
    real = smi_procs.read_table

    def broken(s, f, m, text, lineno, window):
        real(s, f, m, text, lineno, window)
        block, start = s._src
        rows = f["smi_procs"][lineno]
        for line in block[start:].decode().splitlines()[1:12]:
            r = na_row.match(line.strip())
            if r:
                rows.append((int(r.group("gpu")), r.group("type"), 8 * GiB, int(r.group("pid"))))
    monkeypatch.setitem(facts.HANDLERS, "smi_procs", broken)


def test_wddm_control_fails_with_na_rows_read_as_8_gib(monkeypatch):
    # tri79's control passes with the right reader (test_triage_tri79) and now fails with the broken one: it can fail
    _broken_reader(monkeypatch)
    with pytest.raises(AssertionError):
        T.test_wddm_rows_without_a_figure_are_not_read()
