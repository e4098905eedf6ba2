"""The total memory torch (and so vLLM's "total_gpu_memory") reports for a card, by its name: what `kv --gpu-name`
takes for --vram when none is given. A "24 GB" card is 24 GB of 10^9 bytes less the driver's reserve, about 23.6 GiB.
Each figure is the one the rows of benchmarks/data/llm_measured.json print for that card (vLLM logs, the
total_gpu_memory of its "can use total_gpu_memory (X GiB) x gpu_memory_utilization" line)."""
import re

# (pattern over the lower-cased name, GiB); the first match wins: variants before their base names
VISIBLE_GIB = (
    (r"4090.*48 ?gb|48 ?gb.*4090", None),  # the modded 48 GB 4090s differ (one row: 47.50); not guessed
    (r"rtx ?4090", 23.55),                  # also the 4090 D (five rows)
    (r"rtx ?3090", 23.56),
    (r"rtx ?5090(?!.*laptop)", 31.36),
    (r"rtx ?4080", 15.99),
    (r"h100.*nvl", 93.02),
    (r"h100", 79.19),
    (r"a100.*40|a100-sxm4-40gb", 39.39),
    (r"a100|a800", 79.25),
    (r"l40s?\b", 44.42),
    (r"\bl4\b", 22.03),
    (r"\bt4\b", 14.74),
    (r"rtx pro 6000", 94.97),
)


def visible_gib(gpu_name) -> float | None:
    """The card's total as torch reports it, None for a card not in the table."""
    name = str(gpu_name or "").lower()
    for pattern, gib in VISIBLE_GIB:
        if re.search(pattern, name):
            return gib
    return None
