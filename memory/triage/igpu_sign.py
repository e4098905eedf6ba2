"""(fix66f, review rev66b F1/F2) Whether the failing device shows an integrated GPU's sign: the guides' carve-out advice
(faq-igpu-carveout, the weights guides' "larger carve-out" paragraph) is for such a device only.

A total of at most case.TINY_CARD alone does not say "integrated": NVIDIA's GT 1030, MX250 and GT 710 are 2 GiB discrete
cards, whose smaller files and offload settings do help. The signs read here:
  - facts "igpu_named" (llama.cpp's Vulkan "uma: 1", "integrated GPU", "iGPU", "unified memory", a Radeon NNNM);
  - the device's name (ComfyUI's "Device:" line) naming an APU's graphics: "Radeon(TM) Graphics", a Vega iGPU, "APU",
    Intel's UHD/Iris/Iris Xe graphics;
  - on ROCm or an Intel XPU, a tiny total itself, unless the device's name is a discrete card's: ROCm's supported Radeons
    and Intel Arc start at 4 GiB and an APU's default UMA frame buffer is 512 MiB, but an RX 550 2 GB (gfx803, older ROCm
    and community builds) or a Radeon 520 runs with 2 GiB (review rev66e #1)."""
import re

IGPU_NAME = re.compile(r"\bRadeon(?:\(TM\))? Graphics\b|\bRadeon(?:\(TM\))? Vega \d{1,2}\b|\bVega \d{1,2} Graphics\b|"
                       r"\bAPU\b|\bIntel(?:\(R\))? (?:UHD|HD|Iris)\b")
_IGPU_BACKENDS = ("rocm", "xpu")
# a discrete card's name: a Radeon with a model number (RX 550, R7 250, Pro WX 2100, "Radeon 520") or an Arc A-series;
# an APU's "Radeon 780M" / "Radeon 610S" is igpu_named's (read first)
DISCRETE_NAME = re.compile(r"\bRadeon(?:\(TM\))? (?:RX |R[5-9] |Pro (?:WX )?|HD )?\d{3,4}\b(?![MS])|\bArc(?:\(TM\))? A\d{3}\b")


def igpu_sign(x, tiny: bool) -> bool:
    """x: the case (case.build); tiny: the device's total is at most TINY_CARD."""
    f = x.f
    if f.get("igpu_named") or IGPU_NAME.search(f.get("device") or ""):
        return True
    return bool(tiny) and x.env.get("backend") in _IGPU_BACKENDS and not DISCRETE_NAME.search(f.get("device") or "")
