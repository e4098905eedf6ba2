"""(task tri79) nvidia-smi's own table of the processes on each card, and what its graphics processes hold.

nvidia-smi's default output ends in a "Processes:" table, a process a row: the GPU's index, (MIG's GI and CI ids), the
pid, the type, the process name and its "GPU Memory Usage" in MiB ("|    0   N/A  N/A      2105      G   /usr/lib/xorg/Xorg
458MiB |"; drivers before 450 print no GI/CI columns). The type is "C" for a compute process, "G" for a graphics process
and "C+G" for one that is both: NVML's nvmlDeviceGetComputeRunningProcesses lists the processes with a compute context ("e.g.
CUDA application which have active context"; graphics applications, OpenGL or DirectX, are not listed there) and
nvmlDeviceGetGraphicsRunningProcesses the graphics ones (NVML API reference). A program that fails in CUDA (or in a library
over CUDA) holds a compute context on the card, so it is listed as "C" or "C+G", never "G": what the "G" rows of its card hold
(the display server, the desktop's compositor, a browser) is other programs' memory. Those programs keep it whenever the
table was taken (before, during or after the run), where a compute row may be this program or one that has since ended. A
row whose memory nvidia-smi cannot read (Windows' WDDM prints "N/A") gives no figure and is not read."""
import re

from ..units import GiB, MiB

# its column header ("|  GPU   GI   CI        PID   Type   Process name            GPU Memory |", or before driver 450
# "|  GPU       PID   Type   Process name                             Usage      |") is fact_patterns' "smi_procs"
# one process row; GI and CI are "N/A" (no MIG) or the instance ids; bounded, linear
ROW = re.compile(r"^\|\s{1,12}(?P<gpu>\d{1,2})\s{1,12}(?:(?:N/A|\d{1,3})\s{1,12}(?:N/A|\d{1,3})\s{1,12})?(?P<pid>\d{1,10})"
                 r"\s{1,12}(?P<type>C\+G|C|G)\s{1,12}\S.{0,240}?\s(?P<mib>\d{1,9})\s?MiB\s{0,12}\|\s{0,4}$")
ROWS_MAX = 64           # lines read after a header (the table's sub-header and rule, then its rows)
TABLES_KEPT = 16        # tables kept a log (the nearest to a failure is read)
# what the graphics processes of the failing card must hold to be read as the memory it lacked: past a desktop's, as
# predicates.others_hold reads PyTorch's own list (its floor: 1.5 GiB, or a tenth of the card up to DESKTOP)
FLOOR = 1.5 * GiB


def read_table(s, f, m, text, lineno, window):
    """facts "smi_procs": the header's line -> [(gpu index, type, bytes)] of the rows under it, read from the scanner's block
    (scan._src) as facts._smi_apps reads the compute-apps CSV's rows. The sub-header and the "===" rule are skipped; a row
    whose memory is not in MiB (WDDM's "N/A"), the table's border or any other line ends it."""
    block, start = s._src if s._src and not window else (b"", 0)
    pos = block.find(b"\n", start) if block else -1
    rows = []
    for _ in range(ROWS_MAX):
        if pos < 0:
            break
        end = block.find(b"\n", pos + 1)
        line = block[pos + 1:min(end if end >= 0 else len(block), pos + 1025)].decode("utf-8", "replace").strip()
        row = ROW.match(line)
        if row:
            rows.append((int(row.group("gpu")), row.group("type"), int(row.group("mib")) * MiB))
        elif rows or not line.startswith("|") or "PID" in line:
            break
        pos = end
    d = f.setdefault("smi_procs", {})
    d[lineno] = rows
    while len(d) > TABLES_KEPT:
        del d[next(iter(d))]


def graphics_held(x):
    """What the "G" rows of the failing card hold in nvidia-smi's process table nearest to the failure (before the next
    failure), where the failure is a CUDA one whose message lists no process of its own (x.others: PyTorch's list, read by
    its own rows); else None. The card is the failure's device index, else 0 (CUDA's default device)."""
    tables = {n: rows for n, rows in (x.f.get("smi_procs") or {}).items() if x.until is None or n < x.until}
    if not tables or x.ev.get("device_kind") != "cuda" or x.others is not None:
        return None
    rows = tables[min(tables, key=lambda n: abs(n - x.line))]
    gpu = x.ev.get("device_index") or 0
    held = sum(b for g, t, b in rows if g == gpu and t == "G")
    return held or None


def graphics_hold(x) -> bool:
    """The graphics processes hold past a desktop's share of the card (predicates.others_hold's floor, from the failure's own
    total, else the largest total nvidia-smi's table printed, else FLOOR alone) and cover the shortfall where it is known."""
    from .predicates import DESKTOP     # (facts.py imports this module before predicates.py can be)
    held = graphics_held(x)
    if held is None:
        return False
    total = x.total or max((x.f.get("cuda_query_total") or {}).values(), default=0)
    return held >= max(FLOOR, min(0.1 * total, DESKTOP)) and held >= (x.short or 0)
