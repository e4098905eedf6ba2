"""(fix66f, review rev66b F1/F2) Whether the failing device shows an integrated GPU's sign: the guides' carve-out advice
(faq-igpu-carveout, the weights guides' "larger carve-out" paragraph) is for such a device only.

A total of at most case.TINY_CARD alone does not say "integrated": NVIDIA's GT 1030, MX250 and GT 710 are 2 GiB discrete
cards, whose smaller files and offload settings do help. The signs read here:
  - facts "igpu_named" (llama.cpp's Vulkan "uma: 1", "integrated GPU", "iGPU", "unified memory", a Radeon NNNM);
  - the device's name (ComfyUI's "Device:" line) naming an APU's graphics: "Radeon(TM) Graphics", a Vega iGPU, "APU",
    Intel's UHD/Iris/Iris Xe graphics;
  - on ROCm or an Intel XPU, a tiny total itself: no discrete card either stack runs has 2 GiB or less (ROCm's supported
    Radeons and Intel Arc start at 4 GiB), while an APU's default UMA frame buffer is 512 MiB."""
import re

IGPU_NAME = re.compile(r"\bRadeon(?:\(TM\))? Graphics\b|\bRadeon(?:\(TM\))? Vega \d{1,2}\b|\bVega \d{1,2} Graphics\b|"
                       r"\bAPU\b|\bIntel(?:\(R\))? (?:UHD|HD|Iris)\b")
_IGPU_BACKENDS = ("rocm", "xpu")


def igpu_sign(x, tiny: bool) -> bool:
    """x: the case (case.build); tiny: the device's total is at most TINY_CARD."""
    f = x.f
    if f.get("igpu_named") or IGPU_NAME.search(f.get("device") or ""):
        return True
    return bool(tiny) and x.env.get("backend") in _IGPU_BACKENDS
