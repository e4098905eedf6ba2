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
row whose memory nvidia-smi cannot read (Windows' WDDM prints "N/A") gives no figure and is not counted.

(rev65b) Which card failed: the failure's device index is CUDA's, not nvidia-smi's. CUDA_VISIBLE_DEVICES renumbers the cards
the program sees (ComfyUI's --cuda-device N sets it: ComfyUI main.py:40-44, so its "cuda:0" is nvidia-smi's GPU N), and
CUDA's default order is fastest first where nvidia-smi's is the PCI bus order. So the table's card is read only where the
mapping is clear: the compute ("C", "C+G") rows are all on one card (the failing program's own row is there); or they are
one process's, on several cards with the same figure (a data-parallel run, a replica a card: with the same demand on each,
the card with the least room binds first, the one whose graphics rows hold the most); or, with no compute row, the table
(and nvidia-smi's GPU table printed above it) shows one card. Otherwise no card is read."""
import re

from ..units import MiB
from .shares import desktop_share

# its column header ("|  GPU   GI   CI        PID   Type   Process name            GPU Memory |", or before driver 450
# "|  GPU       PID   Type   Process name                             Usage      |") is fact_patterns' "smi_procs"
# one process row; GI and CI are "N/A" (no MIG) or the instance ids; its memory in MiB or "N/A" (WDDM). (rev65b) Driver 570+
# right-aligns the PID in a 16-wide field after CI's "N/A", so a PID of 3 digits has 13 spaces before it: up to 20 are allowed.
# Bounded, linear
ROW = re.compile(r"^\|\s{1,20}(?P<gpu>\d{1,2})\s{1,20}(?:(?:N/A|\d{1,3})\s{1,12}(?:N/A|\d{1,3})\s{1,20})?(?P<pid>\d{1,10})"
                 r"\s{1,12}(?P<type>C\+G|C|G)\s{1,12}\S.{0,240}?\s(?:(?P<mib>\d{1,9})\s?MiB|N/A)\s{0,12}\|\s{0,4}$")
ROWS_MAX = 64           # lines read after a header (the table's sub-header and rule, then its rows)
TABLES_KEPT = 16        # tables kept a log (the nearest to a failure is read)
# (rev65b) a card of nvidia-smi's GPU table printed this many lines or fewer after the one before it (4 lines a card)
CARD_LINES = 8
# (rev65b) one process's figures on its cards within this share of each other are replicas' (the same work a card)
REPLICA_SPREAD = 0.05


def read_table(s, f, m, text, lineno, window):
    """facts "smi_procs": the header's line -> [(gpu index, type, bytes or None, pid)] of the rows under it, read from the scanner's
    block (scan._src) as facts._smi_apps reads the compute-apps CSV's rows; a row whose memory nvidia-smi cannot read (WDDM's
    "N/A") has None. (rev65b) Any other line inside the table (its sub-header, the "===" rule, "No running processes found",
    a row this reader does not know) is skipped; the table's border ("+---"), a line outside a table or a next header ends it."""
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
            mib = row.group("mib")
            rows.append((int(row.group("gpu")), row.group("type"), int(mib) * MiB if mib else None, int(row.group("pid"))))
        elif not line.startswith("|") or "PID" in line:
            break
        pos = end
    d = f.setdefault("smi_procs", {})
    d[lineno] = rows
    while len(d) > TABLES_KEPT:
        del d[next(iter(d))]


def printed_cards(x, n):
    """How many cards nvidia-smi's GPU table printed just above the process table whose header is on line n (facts
    "cuda_query_total": one entry a card's Memory-Usage row, CARD_LINES apart at most), 0 where none is there."""
    lines = sorted((k for k in (x.f.get("cuda_query_total") or {}) if k < n), reverse=True)
    count, last = 0, n
    for k in lines:
        if last - k > (CARD_LINES if count else 4 * CARD_LINES):
            break
        count, last = count + 1, k
    return count


def card_read(rows, printed):
    """(rev65b) nvidia-smi's index of the card the failure is on, where the table makes it clear: its compute rows ("C",
    "C+G") are all on one card; or they are one process's replicas (replica_card); or it has no compute row and shows one
    card (as does the GPU table printed with it: printed cards, 0 where none). Else None: the failure's own device index is
    CUDA's, which CUDA_VISIBLE_DEVICES and CUDA's order (fastest first) map to nvidia-smi's cards in ways the log does not
    show."""
    compute = {r[0] for r in rows if r[1] != "G"}
    if len(compute) > 1:
        return replica_card(rows)
    if compute:
        return compute.pop()
    cards = {r[0] for r in rows}
    return cards.pop() if len(cards) == 1 and printed <= 1 else None


def replica_card(rows):
    """The card a data-parallel run fails on first: every compute row is one process's (one pid), each card's figure within
    REPLICA_SPREAD of the others (the same work on each), so the card with the least room binds first, the one whose graphics
    rows hold the most (one card, not a tie); else None. Batch 394: marian (--devices 0 1 --sync-sgd) holds 1745 MiB on
    both cards; Xorg, gnome-shell and a browser hold 1879 MiB of GPU 0 and 4 MiB of GPU 1."""
    compute = [r for r in rows if r[1] != "G"]
    figures = [r[2] for r in compute]
    if len({r[3] for r in compute}) != 1 or not all(figures) or max(figures) > (1 + REPLICA_SPREAD) * min(figures):
        return None
    held = {g: sum(r[2] or 0 for r in rows if r[0] == g and r[1] == "G") for g in {r[0] for r in compute}}
    most = max(held.values())
    return next(g for g, h in held.items() if h == most) if most and list(held.values()).count(most) == 1 else None


def graphics_held(x):
    """What the "G" rows of the failing card hold in nvidia-smi's process table nearest to the failure (before the next
    failure), where the failure is a CUDA one whose message lists no process of its own (x.others: PyTorch's list, read by
    its own rows); else None. The card is the one card_read finds (the failure's device index is not nvidia-smi's)."""
    tables = {n: rows for n, rows in (x.f.get("smi_procs") or {}).items() if x.until is None or n < x.until}
    if not tables or x.ev.get("device_kind") != "cuda" or x.others is not None:
        return None
    n = min(tables, key=lambda k: abs(k - x.line))
    gpu = card_read(tables[n], printed_cards(x, n))
    if gpu is None:
        return None
    held = sum(r[2] for r in tables[n] if r[0] == gpu and r[1] == "G" and r[2])
    return held or None


def graphics_hold(x) -> bool:
    """The graphics processes hold past a desktop's share of the card (shares.desktop_share, as predicates.others_hold reads
    PyTorch's own list; from the failure's own total, else the largest total nvidia-smi's table printed) and cover the
    shortfall where it is known."""
    held = graphics_held(x)
    if held is None:
        return False
    total = x.total or max((x.f.get("cuda_query_total") or {}).values(), default=0)
    return held >= desktop_share(total) and held >= (x.short or 0)
