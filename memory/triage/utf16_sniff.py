"""Which UTF-16 a log is written in, read from its first bytes, BOM or not (aud67b #13).

PowerShell 5's `>` writes UTF-16LE with a byte-order mark, and engine read that as text; a UTF-16 file without the
mark (a tool that writes `utf-16-le`, a log cut from the middle of a longer one) was refused as binary ("50 % NUL").
An ASCII-heavy log in UTF-16LE has a NUL at every odd offset and almost none at even ones (BE the other way round);
a binary file has NULs at both (an ELF's zero padding: ~88 % and ~81 % of the first 4 KB) or at neither."""

SNIFF_BYTES = 4096   # the head looked at
MIN_UNITS = 8        # fewer 2-byte units than this: too short to tell
MOSTLY = 0.9         # share of NULs at the high byte of each unit
RARELY = 0.02        # most share of NULs at the low byte (a stray U+0100..U+FFFF character has no NUL low byte either)


def utf16_encoding(head: bytes):
    """The codec name to read a log beginning with `head` as: "utf-16" (a BOM says which order), "utf-16-le" or
    "utf-16-be" (no BOM, NULs alternate), or None (not UTF-16 by this test)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    sample = head[:SNIFF_BYTES]
    units = len(sample) // 2
    if units < MIN_UNITS:
        return None
    even = sum(1 for b in sample[0:units * 2:2] if b == 0) / units
    odd = sum(1 for b in sample[1:units * 2:2] if b == 0) / units
    if odd >= MOSTLY and even <= RARELY:
        return "utf-16-le"
    if even >= MOSTLY and odd <= RARELY:
        return "utf-16-be"
    return None
