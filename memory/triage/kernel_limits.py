"""A GPU kernel that asks for more on-chip memory per threadgroup than the GPU allows (round 110): a limit of the platform on
one kernel's configuration, not the device's memory (R5's family, as Triton's shared-memory refusal, other_patterns.TRITON_SMEM).
parse.py lists the recogniser; servers.add_block_fields reads the limit from the line under it when a quote wraps the message."""
import re

# Metal's pipeline compiler refusing a compute kernel whose threadgroup (on-chip) memory is over the GPU's maximum, its NSError
# text as MLX raises it under "[metal::Device] Unable to load kernel <name>": "Threadgroup memory size (53760) exceeds the maximum
# threadgroup memory allowed (32768)", both figures in bytes; a quote may wrap it after "maximum threadgroup" (the limit on the
# next line, METAL_THREADGROUP_TAIL)
METAL_THREADGROUP = re.compile(r"\bThreadgroup memory size \((\d{1,12})\) exceeds the maximum threadgroup"
                               r"(?: memory allowed \((\d{1,12})\))?")
METAL_THREADGROUP_TAIL = re.compile(r"^\s{0,8}memory allowed \((\d{1,12})\)")


def metal_threadgroup(line):
    m = METAL_THREADGROUP.search(line) if "maximum threadgroup" in line else None
    if not m:
        return None
    nums = {"requested": int(m.group(1))}
    if m.group(2):
        nums["max_allowed"] = int(m.group(2))
    return {"kind": "metal.threadgroup", "device_kind": "metal", "numbers": nums, "runtime": None, "complete": True}


metal_threadgroup.needed = ("maximum threadgroup",)


def metal_threadgroup_tail(ev, text) -> bool:
    """The limit of a wrapped message, read from the line under it; True if it was read."""
    m = METAL_THREADGROUP_TAIL.match(text) if "max_allowed" not in ev["numbers"] else None
    if m:
        ev["numbers"]["max_allowed"] = int(m.group(1))
    return bool(m)
