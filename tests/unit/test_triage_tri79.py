"""Task tri79 (issue 14): nvidia-smi's process table beside a CUDA failure; what its graphics ("G") processes hold on the
failing card is other programs' memory (smi_procs.graphics_hold, rules_process). Inputs written by hand in the tools' own
formats; none taken from a corpus file.

nvidia-smi types a process "C" (compute), "G" (graphics) or "C+G". A program that fails in CUDA holds a compute context,
so it is never a "G" row: the display server, the desktop and a browser are. Where they hold past a desktop's share of the
card (predicates.others_hold's floor: 1.5 GiB, or a tenth of the card up to 4 GiB), the memory the failure lacked is
theirs. The rows are read from the table's column header down (facts "smi_procs")."""
import pytest

from support.triage_event import read, top

GiB, MiB = 1 << 30, 1 << 20

# a C++ trainer's own CUDA check of its cudaMalloc (no allocator figures; the driver-level rows read it)
CPP_OOM = ("[2024-03-02 10:11:12] Error: CUDA error 2 'out of memory' - src/tensors/gpu/device.cu:40: cudaMalloc(&ptr, bytes)\n"
           "[2024-03-02 10:11:12] Error: Aborted from void Device::reserve(size_t) in src/tensors/gpu/device.cu:40\n")


def gpu_table(*cards):
    """nvidia-smi's GPU table (driver 450's layout): (name, used MiB, total MiB) a card."""
    rows = "".join(f"|   {i}  {name:<18}Off  | 00000000:0{i + 1}:00.0  On |                  N/A |\n"
                   f"| 50%   60C    P0    N/A /  N/A |  {used:>5}MiB / {total:>5}MiB |     95%      Default |\n"
                   f"|                               |                      |                  N/A |\n"
                   "+-------------------------------+----------------------+----------------------+\n"
                   for i, (name, used, total) in enumerate(cards))
    return ("+-----------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 450.80.02    Driver Version: 450.80.02    CUDA Version: 11.0     |\n"
            "|-------------------------------+----------------------+----------------------+\n"
            "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
            "|===============================+======================+======================|\n" + rows)


def procs_table(*rows, mig_columns=True):
    """nvidia-smi's process table: (gpu, pid, type, name, MiB or "N/A") a row; mig_columns=False is the layout before
    driver 450 (no GI/CI columns)."""
    if mig_columns:
        head = ("|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n"
                "|        ID   ID                                                   Usage      |\n")
        body = "".join(f"|  {g:>3}   N/A  N/A  {pid:>9}  {t:>4}   {name:<28}{str(mib) + ('MiB' if mib != 'N/A' else ''):>10} |\n"
                       for g, pid, t, name, mib in rows)
    else:
        head = "|  GPU       PID   Type   Process name                             Usage      |\n"
        body = "".join(f"|  {g:>3}  {pid:>8}  {t:>5}   {name:<38}{str(mib) + ('MiB' if mib != 'N/A' else ''):>10} |\n"
                       for g, pid, t, name, mib in rows)
    return ("+-----------------------------------------------------------------------------+\n"
            "| Processes:                                                                  |\n" + head
            + "|=============================================================================|\n" + body
            + "+-----------------------------------------------------------------------------+\n")


DESKTOP_4GB = [(0, 1501, "G", "/usr/lib/xorg/Xorg", 470), (0, 1630, "G", "/usr/bin/gnome-shell", 390),
               (0, 40211, "G", "/opt/browser/browser --type=gpu", 1050), (0, 52310, "C", "./trainer", 1700)]


@pytest.mark.parametrize("text", [
    CPP_OOM + "\n$ nvidia-smi\n" + gpu_table(("Quadro P1000", 3610, 4036)) + procs_table(*DESKTOP_4GB),    # after the error
    gpu_table(("Quadro P1000", 3610, 4036)) + procs_table(*DESKTOP_4GB) + CPP_OOM,                       # before it
    CPP_OOM + procs_table(*DESKTOP_4GB, mig_columns=False),                                               # driver < 450
])
def test_graphics_processes_past_a_desktops_share_read_other_process(text):
    # fails on the old rules: the process table was not read, and the driver error read as the program's own buffer
    # (activations) or the driver-level "other"
    cause, conf, ev = top(text)
    assert cause == "other-process", conf
    said = " ".join(next(c for c in ev["causes"] if c["id"] == cause)["evidence"])
    assert "nvidia-smi" in said and "1.87 GiB" in said     # 470 + 390 + 1050 MiB = 1910 MiB, the compute row left out


def test_one_program_on_two_cards_reads_the_card_with_the_desktop():
    # (rev65b) the failure's device index is CUDA's, not nvidia-smi's, so it names no card of this table (tri79 read card 0
    # here as CUDA's default device). The trainer is one process (one pid) with the same figure on both cards, a
    # data-parallel run: with the same demand on each, the card with the least room binds first, the one whose graphics rows
    # hold the most (smi_procs.replica_card), card 0 here
    rows = DESKTOP_4GB + [(1, 1501, "G", "/usr/lib/xorg/Xorg", 4), (1, 52310, "C", "./trainer", 1700)]
    cause, _conf, _ev = top(CPP_OOM + gpu_table(("Quadro P1000", 3610, 4036), ("Quadro P1000", 1704, 4040)) + procs_table(*rows))
    assert cause == "other-process"


def test_a_small_desktop_is_not_read():
    # control: Xorg and the shell holding 860 MiB of a 4 GiB card is a desktop's share, not the memory the run lacked
    cause, conf, _ev = top(CPP_OOM + procs_table(*(DESKTOP_4GB[:2] + DESKTOP_4GB[3:])))
    assert cause != "other-process", conf


def test_compute_rows_are_not_read():
    # control: a "C" row may be the program that failed (or one that has ended): only graphics rows are others'
    rows = [(0, 1501, "G", "/usr/lib/xorg/Xorg", 300), (0, 7001, "C", "python", 3000)]
    cause, _conf, _ev = top(CPP_OOM + procs_table(*rows))
    assert cause != "other-process"


def test_graphics_rows_on_another_card_are_not_read():
    # control: the desktop is on card 1; the compute row (the program's) is on card 0 alone, so card 0 is the one read
    rows = [(1, 1501, "G", "/usr/lib/xorg/Xorg", 900), (1, 1630, "G", "/usr/bin/gnome-shell", 1200), (0, 7001, "C", "./trainer", 3600)]
    cause, _conf, _ev = top(CPP_OOM + procs_table(*rows))
    assert cause != "other-process"


def test_a_desktops_share_of_a_large_card_is_not_read():
    # control: 2.2 GiB of graphics on a 24 GiB card is under a tenth of it (the floor others_hold uses)
    rows = [(0, 1501, "G", "/usr/lib/xorg/Xorg", 1000), (0, 40211, "G", "/opt/browser/browser --type=gpu", 1250)]
    cause, _conf, _ev = top(CPP_OOM + gpu_table(("GeForce RTX 3090", 23000, 24268)) + procs_table(*rows))
    assert cause != "other-process"


def test_wddm_rows_without_a_figure_are_not_read():
    # control: under Windows' WDDM nvidia-smi prints no figure ("N/A") for a process: graphics rows without one hold nothing
    # read. (rev65b) They were "C+G" rows, never counted whatever their figure, so this could not fail: the reviewer's
    # reader that reads N/A as 8 GiB makes it fail now (test_triage_rev65b)
    rows = [(0, 5384, "G", "C:\\Windows\\explorer.exe", "N/A"), (0, 7376, "G", "C:\\Windows\\System32\\dwm.exe", "N/A")]
    cause, _conf, _ev = top(CPP_OOM + procs_table(*rows))
    assert cause != "other-process"


def test_pytorchs_own_process_list_keeps_its_rows():
    # control: PyTorch's message lists the processes itself (x.others): its own rows read it, not the table's
    torch_oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of "
                 "3.94 GiB of which 120.00 MiB is free. Process 1501 has 300.00 MiB memory in use. Including non-PyTorch "
                 "memory, this process has 3.40 GiB memory in use. Of the allocated memory 2.90 GiB is allocated by PyTorch, "
                 "and 150.00 MiB is reserved by PyTorch but unallocated.\n")
    cause, _conf, ev = top(torch_oom + procs_table(*DESKTOP_4GB))
    assert not any("nvidia-smi's process table" in e for c in ev["causes"] for e in c["evidence"])
    assert cause != "other-process"


def test_the_table_gives_no_numbers_of_its_own():
    # the rows are read for the row only: the failure's numbers stay as they were (none for this driver error)
    _cause, _kind, _runtime, device, numbers = read(CPP_OOM + procs_table(*DESKTOP_4GB))
    assert device == "cuda" and numbers == {}
