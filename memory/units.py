"""Byte sizes: parse what runtimes print ("1.50 GiB", "512 MiB", "3.2GB") and format for people."""
import re

GiB = 1 << 30
MiB = 1 << 20
KiB = 1 << 10

_UNITS = {
    "": 1, "B": 1, "BYTES": 1,
    "K": KiB, "KB": 1000, "KIB": KiB,
    "M": MiB, "MB": 1000**2, "MIB": MiB,
    "G": GiB, "GB": 1000**3, "GIB": GiB,
    "T": 1 << 40, "TB": 1000**4, "TIB": 1 << 40,
}
SIZE_RE = re.compile(r"(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[KMGT]i?B|[KMGT]|B|bytes)?", re.I)


class SizeError(ValueError):
    """A printed figure that is no number or size ("0..99", "8..7 GiB"): what a log's text can hold, unlike a bug."""


def num(text: str) -> float:
    """float(text) for a figure a pattern took from a log; SizeError where it is no number."""
    try:
        return float(text)
    except ValueError:
        raise SizeError(f"not a number: {text!r}") from None


def parse_size(text: str, binary_decimal: bool = False) -> int:
    """"1.50 GiB" -> bytes. With binary_decimal, "GB"/"MB" mean GiB/MiB (PyTorch and most runtimes
    print GiB but some label it GB)."""
    m = SIZE_RE.fullmatch(text.strip())
    if not m:
        raise SizeError(f"not a size: {text!r}")
    unit = (m.group("unit") or "").upper()
    if binary_decimal and unit in ("KB", "MB", "GB", "TB"):
        unit = unit[0] + "IB"
    if "." not in m.group("num"):
        # a whole count is exact: a float keeps 53 bits, and a wrapped 64-bit figure ("18446744073707737660 B") must not round
        return int(m.group("num")) * _UNITS[unit]
    return int(round(float(m.group("num")) * _UNITS[unit]))


# one GPU's memory, as --vram gives it (kv and estimate): 256 MiB to 4 TiB (the largest card today holds 288 GB);
# outside is a typo (--vram 100000 for 100 GB), not a card
GPU_BYTES_RANGE = (256 * MiB, 4 << 40)


def gpu_size_problem(vram_bytes) -> str | None:
    """Why --vram is no GPU's size, or None: the one plausibility check of kv and estimate."""
    lo, hi = GPU_BYTES_RANGE
    if not lo <= vram_bytes <= hi:
        return f"--vram {vram_bytes / GiB:g} GiB is not a plausible GPU size (one GPU's memory: {lo // MiB} MiB to {hi // GiB} GiB)"
    return None


_GIB_WITH_UNIT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:gib|gb|g)\s*", re.I)


def gib_arg(text: str) -> float:
    """argparse type of an option in GiB (--vram, --ram, --reserve-vram): a number; '24GB' or '24 GiB' is refused with
    the number to type (a unit is not guessed: 'GB' on a card's box is GiB, on the Hub decimal)."""
    import argparse
    try:
        return float(text)
    except ValueError:
        pass
    m = _GIB_WITH_UNIT.fullmatch(text)
    if m:
        raise argparse.ArgumentTypeError(f"{text!r}: give the number alone, in GiB: {m.group(1)}")
    raise argparse.ArgumentTypeError(f"not a number of GiB: {text!r}")


def fmt_bytes(n: float | int | None, unit: str = "auto") -> str:
    if n is None:
        return "n/a"
    sign = "-" if n < 0 else ""
    n = abs(n)
    if unit == "auto":
        unit = "GiB" if n >= GiB else "MiB" if n >= MiB else "KiB" if n >= KiB else "B"
    div = {"GiB": GiB, "MiB": MiB, "KiB": KiB, "B": 1}[unit]
    return f"{sign}{n / div:.2f} {unit}" if unit != "B" else f"{sign}{int(n)} B"
