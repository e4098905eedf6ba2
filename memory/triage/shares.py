"""Shares of the card that both the message readers and the predicates use. One definition for both: predicates
imports torch_readers (through facts and parse), so neither can take the constant from the other."""
from ..units import GiB

# cached-but-unallocated slack (or free memory) under this share of the card is a sliver, not a layout problem
SLIVER = 0.04
# PyTorch holding more than this share of the card is past rounding: the memory is not all on the card
OVER_CARD = 1.02
# (rev6 S4) one failing request of at least this share of the card is sized by its input (the activations' row reads it,
# and the tiny-card weights row hands it over with the same test: predicates.big_request)
REQUEST_SHARE = 0.5

# (rev65b) what a display and the desktop beside it (compositor, browser, a second app's context) hold on a card: well under
# DESKTOP. Past it, memory another process holds is a program's working set, whatever the card's size
DESKTOP = 4 * GiB


def desktop_share(total) -> float:
    """A desktop's share of a card of `total` bytes (0: unknown): 1.5 GiB, or a tenth of the card up to DESKTOP. A tenth of a
    small card (2.4 GiB of 24) is still a display's; on a 140 GiB card a tenth is 14 GiB, far past any desktop. Other programs
    holding more than this read as the memory the failure lacked (predicates.others_hold, smi_procs.graphics_hold)."""
    return max(1.5 * GiB, min(0.1 * (total or 0), DESKTOP))
