"""fix7: review rev7's B1, with hand-written inputs modelled on the review's reproducers and expected values worked out by hand.

B1. nvidia-smi's compute-apps table after a failure: only the one row that matches the failing process's own figure
    ("this process has N memory in use", within rounding) is left out; where no row matches, the process is gone and
    every row is another program's (round 114's case: a table captured after the program exited)."""
from support.triage_event import SMI_APPS_HEADER, TORCH_OOM_2250, top

# an old-style PyTorch OOM: reserved memory only, no "this process has" figure
OLD_OOM = ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.64 GiB total capacity; 10.50 GiB already "
           "allocated; 10.00 MiB free; 11.00 GiB reserved in total by PyTorch)\n")
NEW_OOM = TORCH_OOM_2250
SMI = SMI_APPS_HEADER


def test_table_after_exit_keeps_its_only_row():
    # rev7 B1's reproducer: 12288 MiB = 12.00 GiB held by the one other process; the failed one (reserved 11 GiB) is gone.
    # Before fix7: 12 - 11 = 1 GiB < 1.5 GiB, silent; now 12 GiB >= 1.5 GiB
    cause, _, ev = top(OLD_OOM + SMI + "5151, /usr/bin/python3, 12288 MiB\n")
    assert cause == "other-process"
    assert any("compute-apps table" in e and "holding 12.00 GiB" in e for c in ev["causes"] for e in c["evidence"])


def test_row_not_matching_this_process_is_another_programs():
    # "this process has 22.50 GiB" = 23040 MiB; the one row holds 6144 MiB, far from it: this process is gone, 6 GiB other
    cause, _, _ = top(NEW_OOM + SMI + "5151, /opt/srv/bin/other-server, 6144 MiB\n")
    assert cause == "other-process"


def test_row_within_rounding_of_this_process_is_it():
    # 23044 MiB is 22.504 GiB: within PyTorch's two-decimal rounding of 22.50 GiB, so this process; nothing else is listed
    cause, conf, _ = top(NEW_OOM + SMI + "4242, /usr/bin/python3, 23044 MiB\n")
    assert cause == "activations"
    assert conf.get("other-process", 0) < conf["activations"]

