"""Text utilities every recogniser shares: a cleaned line, a printed size in bytes, and a reading that never raises."""
import re

from ..units import SizeError, num, parse_size  # noqa: F401  (num: the recognisers' float of a figure)

ANSI = r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]"
ANSI_RE = re.compile(ANSI)
ANSI_BYTES_RE = re.compile(ANSI.encode())
CTRL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean(raw) -> str:
    """bytes or str -> printable text: ANSI colour codes and control bytes dropped, CR removed."""
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw).decode("utf-8", "replace")
    if "\x1b" in raw:
        raw = ANSI_RE.sub("", raw)
    raw = raw.replace("\r", "")
    return CTRL_RE.sub("", raw).rstrip("\n")


def size(text: str | None) -> int | None:
    """"1.50 GiB" -> bytes. Runtimes print GiB but a few label it GB; PyTorch and llama.cpp are binary."""
    if text is None:
        return None
    text = text.strip()
    neg = text.startswith("-")
    n = parse_size(text.lstrip("-"), binary_decimal=True)
    return -n if neg else n


def attempt(fn, *args, miss=None):
    """fn(*args), or miss where a figure its pattern took is no number ("0..99", "8..7 GiB": units.SizeError, which
    parse_size, text.size and text.num raise): read as no match, so triage never raises on a log's text. Any other
    exception is a bug of the recogniser or handler and surfaces (in tests first)."""
    try:
        return fn(*args)
    except SizeError:
        return miss
