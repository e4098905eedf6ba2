"""Which UTF-16 (or UTF-32) a log is written in, read from its first bytes, BOM or not (aud67b #13; rev67d F6-F8).

PowerShell 5's `>` writes UTF-16LE with a byte-order mark, and engine read that as text; a UTF-16 file without the
mark (a tool that writes `utf-16-le`, a log cut from the middle of a longer one) was refused as binary ("50 % NUL").
Without a BOM the head is tried as UTF-16 text: one byte parity clearly NUL-heavier than the other (an ASCII character
has its NUL in the high byte; a box-drawing "─" U+2500 or a CJK character may put none or one in the other), a strict
decode in that order, and nearly every character printable. A head of box lines, a tqdm bar of "█" or Chinese lines
is UTF-16 text; a .npy/.pgm of 16-bit values (NULs at one parity too) decodes to control characters and stays binary
("not a text log"); an ELF (NULs at both parities, ~88 % and ~81 % of the first 4 KB) or UTF-8 (none) is not UTF-16.
A UTF-32 BOM (FF FE 00 00, 00 00 FE FF) is checked first: its first two bytes are UTF-16LE's BOM."""

SNIFF_BYTES = 4096   # the head looked at
MIN_UNITS = 8        # fewer 2-byte units than this: too short to tell
MIN_NUL = 0.005      # least share of NULs at the heavier parity (fix67o, rev67j #4: a CJK line of 70 characters and its
#                      newline ~1.4 %; 0.005 takes lines to ~200; the HEAVIER parity check and the strict decode still
#                      refuse 16-bit binaries)
HEAVIER = 4          # the heavier parity has at least this many times the other's share
PRINTABLE = 0.95     # least share of printable characters (tab, CR, LF and ESC of ANSI colours count) in the decoded head
_CONTROL_OK = "\t\n\r\x1b"
UTF32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


def _decodes(sample: bytes, codec: str) -> bool:
    """A strict decode of `sample` in `codec` (the head may end inside a surrogate pair: one unit less is tried too)
    whose characters are nearly all printable."""
    for cut in (len(sample), len(sample) - 2):
        try:
            text = sample[:cut].decode(codec)
        except UnicodeDecodeError:
            continue
        return bool(text) and sum(1 for ch in text if ch.isprintable() or ch in _CONTROL_OK) >= PRINTABLE * len(text)
    return False


def utf16_encoding(head: bytes):
    """The codec name to read a log beginning with `head` as: "utf-32" (its BOM), "utf-16" (a BOM says which order),
    "utf-16-le" or "utf-16-be" (no BOM: the trial decode above), or None (not UTF-16 by this test)."""
    if head.startswith(UTF32_BOMS):
        return "utf-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    units = len(head[:SNIFF_BYTES]) // 2
    if units < MIN_UNITS:
        return None
    sample = head[:units * 2]
    even = sample[0::2].count(0) / units
    odd = sample[1::2].count(0) / units
    heavy, light, codec = (odd, even, "utf-16-le") if odd >= even else (even, odd, "utf-16-be")
    if heavy < MIN_NUL or light * HEAVIER > heavy:
        return None
    return codec if _decodes(sample, codec) else None
