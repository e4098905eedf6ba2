"""bench_llm's SEEN set: the rows read while the formulas were tuned (the regression set), each batch with the
round comment that says when and why it joined, in three parts: batches 1 to 32 (llm_seen_batches_1_32.py), 33 to
71 (llm_seen_batches_33_71.py), and 72 on (llm_seen_batches_72_on.py); a batch read after its first sight joins at
the end of the last."""
from llm_seen_batches_1_32 import SEEN_BATCHES_1_32
from llm_seen_batches_33_71 import SEEN_BATCHES_33_71
from llm_seen_batches_72_on import SEEN_BATCHES_72_ON

# Rows looked at while the formulas were changed after the first-sight commit (the regression set). Every other
# row is first-sight. Named here, once, before tuning.
SEEN = SEEN_BATCHES_1_32 + SEEN_BATCHES_33_71 + SEEN_BATCHES_72_ON
