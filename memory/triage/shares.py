"""Shares of the card that both the message readers and the predicates use. One definition for both: predicates
imports torch_readers (through facts and parse), so neither can take the constant from the other."""

# cached-but-unallocated slack (or free memory) under this share of the card is a sliver, not a layout problem
SLIVER = 0.04
# PyTorch holding more than this share of the card is past rounding: the memory is not all on the card
OVER_CARD = 1.02
# (rev6 S4) one failing request of at least this share of the card is sized by its input (the activations' row reads it,
# and the tiny-card weights row hands it over with the same test: predicates.big_request)
REQUEST_SHARE = 0.5
