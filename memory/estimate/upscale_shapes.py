"""What spandrel's util reads from a state dict's shapes (spandrel/util/__init__.py), for the upscale architecture
readers (upscale_archs.py, upscale_archs_more.py): a header gives shapes, never values."""
import math


def seq_len(table, prefix) -> int:
    """spandrel util.get_seq_len: 1 + the largest N of the keys prefix.N.*, 0 when none."""
    got = {int(k[len(prefix) + 1:].split(".", 1)[0]) for k in table
           if k.startswith(prefix + ".") and k[len(prefix) + 1:].split(".", 1)[0].isdigit()}
    return max(got) + 1 if got else 0


def shuffle_scale(table, prefix):
    """(scale, features) of a pixel-shuffle Upsample (spandrel util.get_pixelshuffle_params): conv i's out/in is s**2."""
    scale, feat = 1, None
    for i in range(0, 10, 2):
        k = f"{prefix}.{i}.weight"
        if k not in table:
            break
        out, feat = table[k][1][0], table[k][1][1]
        scale *= math.isqrt(out // feat)
    return scale, feat


def square_scale(x, in_nc):
    """spandrel util.get_scale_and_output_channels: x = scale**2 * out_nc, out_nc tried as in_nc, 3, 4, 1; None when
    none fits."""
    for c in (in_nc, 3, 4, 1):
        if x % c == 0 and math.isqrt(x // c) ** 2 == x // c:
            return math.isqrt(x // c)
    return None


def has(table, *keys) -> bool:
    return all(k in table for k in keys)
