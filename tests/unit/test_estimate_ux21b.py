"""A first-hour walk (ux21b): on a CPU run the Footprint Estimate face and the CLI printed "peak 3.86 GiB" and then
"CPU run: the running phase 3.47 GiB": the peak holds ComfyUI's VRAM reserve, the running phase (what host RAM is
judged on) does not, and nothing said so. The outcome's reason now names the peak and the reserve it leaves out."""
import re

from gpu_garden.memory.estimate import families, formula, layouts, verdict
from gpu_garden.memory.units import GiB, MiB, fmt_bytes

UNIT = {"B": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": GiB}


def _cpu_sd15():
    comps = families.split_components(layouts.table("sd15_v1-5-pruned-emaonly-fp16"), "v1-5-pruned-emaonly-fp16.safetensors")
    est = formula.judge(formula.estimate(comps, 512, 512, cfg=None, policy={"dynamic_vram": "off", "device": "cpu"}), None)
    est["host_ram"]["available"] = 64 * GiB  # a machine's figure, as the node and the CLI read it
    verdict.cpu_run(est)
    return est


def _bytes(text):
    n, u = text.split()
    return float(n) * UNIT[u]


def test_cpu_run_reason_says_the_running_phase_is_the_peak_less_the_reserve():
    est = _cpu_sd15()
    reason = est["outcome"]["reason"]
    m = re.match(r"CPU run: the running phase ([\d.]+ \w+) \(the peak ([\d.]+ \w+) less ComfyUI's ([\d.]+ \w+) VRAM "
                 r"reserve, not held on a CPU\) and the models kept for reload [\d.]+ \w+ in host RAM, 64.00 GiB available$",
                 reason)
    assert m, reason
    running, peak, reserve = (_bytes(g) for g in m.groups())
    assert m.group(2) == fmt_bytes(est["peak"])  # the same figure the face's verdict line prints
    assert reserve > 0 and abs(running + reserve - peak) <= 0.01 * GiB  # the three add up as printed
