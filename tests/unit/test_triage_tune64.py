"""Rules from tuning on unseen batches 63 and 64 (regression sets since): each test is written from a case's log lines
(the runtime's own line, numbers as the case quotes them) and fails when its rule is broken."""
from gpu_garden.memory.triage import engine


def _top(text):
    r = engine.triage_text(text)
    return [c["id"] for c in r["events"][-1]["causes"]]


# batch-63 pytorch_swift_stepaudio2_dpo_a100_leftover_trainer: the message as quoted stops after the one process entry
LONE_PID = ("torch.OutOfMemoryError: Tried to allocate 836.00 MiB. GPU 2 has a total capacity of 79.11 GiB of which "
            "253.38 MiB is free. Process 3208526 has 78.31 GiB memory in use.\n")


def test_a_lone_pid_in_a_cut_message_may_be_another_program():
    assert _top(LONE_PID)[0] == "other-process"


def test_a_lone_pid_1_or_a_message_that_goes_on_stays_this_process():
    # pid 1 is a container's first process: this one
    assert _top(LONE_PID.replace("Process 3208526", "Process 1"))[0] != "other-process"
    # the message goes on to what PyTorch holds: the container's reading (the entry is this process) stands
    full = LONE_PID.rstrip("\n") + (" Of the allocated memory 77.10 GiB is allocated by PyTorch, and 612.00 MiB is reserved "
                                    "by PyTorch but unallocated.\n")
    assert _top(full)[0] != "other-process"
