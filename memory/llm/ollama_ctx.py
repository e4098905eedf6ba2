"""Ollama's context tables that the CLI's help prints as well as the plan (light: no other import), and their text."""
from ..units import GiB

# Ollama >= 0.15.5: (total VRAM at least, num_ctx); thresholds 47/23 GiB "to account for small differences"
OLLAMA_VRAM_TIERS = ((47 * GiB, 262144), (23 * GiB, 32768), (0, 4096))
# (first release, total VRAM below which Ollama keeps gpt-oss / Qwen3-VL at their default: lowVRAMThreshold)
OLLAMA_LOW_VRAM = ((0, 11, 4), 20 * GiB)


def _gib(n) -> str:
    return f"{n / GiB:g} GiB"


def tiers_text() -> str:
    """'4096 under 23 GiB, 32768 under 47 GiB, else 262144', from OLLAMA_VRAM_TIERS."""
    up = sorted(OLLAMA_VRAM_TIERS)
    return ", ".join(f"{c} under {_gib(up[i + 1][0])}" for i, (_, c) in enumerate(up[:-1])) + f", else {up[-1][1]}"


def tiers_help() -> str:
    """'4096 / 32768 from 23 GiB / 262144 from 47 GiB', from OLLAMA_VRAM_TIERS."""
    up = sorted(OLLAMA_VRAM_TIERS)
    return " / ".join(str(c) if not floor else f"{c} from {_gib(floor)}" for floor, c in up)


def low_vram_text() -> str:
    """'20 GiB', OLLAMA_LOW_VRAM's threshold."""
    return _gib(OLLAMA_LOW_VRAM[1])
