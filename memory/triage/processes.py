"""Which of the processes NVML lists in PyTorch's out-of-memory message ("Process N has X memory in use") is this one, where
the message does not say so ("this process has ..."): in a container NVML reports this process under its host pid."""
from ..units import GiB

# what one PyTorch process holds on its card beyond its caching allocator's reserved memory: its CUDA context with cuBLAS and
# cuDNN handles (300-700 MiB, estimate.spec.CUDA_CONTEXT) and a library's own buffers; a listed process within this of
# PyTorch's reserved figure is this one
OWN_CONTEXT_MAX = 1 * GiB
# (round 72) a rank of a distributed job (torch.distributed prefixes its ranks' lines "[rank0]:") also holds NCCL's
# communicator buffers outside the caching allocator (NCCL_BUFFSIZE per channel and peer, its proxy's): up to about a GiB more
# (tdrussell/diffusion-pipe#153: a DeepSpeed rank listed at 1.18 GiB over PyTorch's reserved figure)
RANK_EXTRA = 1 * GiB
# (round 114) what processes still on the card after a failure must hold, in nvidia-smi's compute-apps table printed after it,
# to have taken this process's memory: past a desktop's share. (rev7 B1) The rows are summed, less the one row that is this
# process where one matches its own figure (a server that logs an OOM and keeps serving is still listed); where none does,
# the process is gone and every row is another program's
SMI_APPS_MIN = 1.5 * GiB
# (rev6 B1) the table's header within this many lines after the failure (a harness's capture right after the exit), and before
# the next failure
SMI_APPS_SPAN = 12
# (rev7 B1) a row is this process's where it is PyTorch's "this process has N GiB memory in use" within rounding: PyTorch
# prints two decimals (0.005 GiB either way), nvidia-smi whole MiB
SMI_OWN_ROUNDING = 0.01 * GiB


def smi_apps_after(x):
    """The memory other processes hold in nvidia-smi's first compute-apps table after this failure (facts "smi_apps": its
    header line, then its rows on the lines right after), or None. A table captured right after the program failed (a
    harness's, a gate script's) lists the processes still running on the card: the failed program's own memory went with
    it. (rev6 B1) Only a header within SMI_APPS_SPAN lines after the failure and before the next one counts. (rev7 B1) A
    process that went on after the failure is still listed: the one row within SMI_OWN_ROUNDING of its own figure
    (PyTorch's "this process has N memory in use") is it and is left out; where no row matches (or the message gives no
    such figure: reserved memory plus a context is no figure to match), every row is another program's."""
    rows = x.f["smi_apps"]
    end = x.line + SMI_APPS_SPAN
    head = min((n for n, v in rows.items() if x.line < n <= end and (x.until is None or n < x.until) and v == "head"),
               default=None)
    if head is None:
        return None
    held, n = [], head + 1
    while isinstance(rows.get(n), int):
        held, n = held + [rows[n]], n + 1
    own = x.n.get("this_process")
    mine = next((i for i, v in enumerate(held) if own and abs(v - own) <= SMI_OWN_ROUNDING), None)
    if mine is not None:
        del held[mine]
    return sum(held) or None


def split_listed(nums: dict, procs: list, rank: bool = False) -> None:
    """Move this process's entry out of nums["other_processes"] (the sum of every listed entry) into nums["this_process"].

    A lone entry is this process: it always holds memory (its CUDA context at least); where PyTorch's reserved figure is
    printed the entry holds it plus a context, and where the message is cut after the entry nothing says it is another
    program's (a cut paste is no evidence either way). Of several entries, the one between PyTorch's reserved figure and it
    plus OWN_CONTEXT_MAX is this process, where exactly one is (pytest-xdist workers or DDP ranks sharing a card,
    huggingface/trl#5207's CI run); with two or more such entries, which is this one is not known and all stay others'.
    `rank`: the message is a distributed rank's ("[rank0]: torch.OutOfMemoryError: ..."): RANK_EXTRA more is allowed."""
    if len(procs) == 1:
        nums["this_process"] = procs[0][1]
        del nums["other_processes"]
    elif len(procs) > 1 and "reserved" in nums:
        room = OWN_CONTEXT_MAX + (RANK_EXTRA if rank else 0)
        mine = [s for _, s in procs if nums["reserved"] <= s <= nums["reserved"] + room]
        if len(mine) == 1:
            nums["this_process"] = mine[0]
            nums["other_processes"] -= mine[0]
