"""Per-allocation caps that refuse one buffer on a card with room for it (aud68c #8).

- SYCL / Level Zero (ggml-org/llama.cpp#9472: an Arc A770 of 16225M refuses the 5.07 GiB weight buffer of
  Llama-3.1-8B Q5_K): Level Zero allocates at most 4 GiB at once unless UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 (the
  Unified Runtime's switch; SD.Next's loader names the same limit for Alchemist cards). rules_other.py's xpu.driver row
  knows it for PyTorch's message only; llama.cpp's "can't allocate N Bytes of memory on device" over 4 GiB on a card
  whose table (ggml_check_sycl's device list) prints more is the same cap.
- Vulkan (ggml-org/llama.cpp#12817: -ub 8192 on an RX 6600M, a 3.69 GiB compute buffer after 3.05 GiB of weights and
  288 MiB of cache, 7920 MiB free at start): the failed buffer plus what was placed fits the free memory, so the
  device refused one allocation over its cap (maxMemoryAllocationSize / maxBufferSize): the vulkan-max-buffer guide.

facts "sycl_total": the largest device total in ggml_check_sycl's table, bytes."""
import re

MiB, GiB = 1 << 20, 1 << 30
L0_CAP = 4 * GiB
FACT = ("sycl_total", re.compile(r"^\|\s{0,4}\d{1,2}\|\s{0,20}\[level_zero:gpu:\d{1,2}\]\|.{0,200}\|\s{0,8}(\d{3,7})M\|"))
FACT_WORDS = ("[level_zero:gpu:",)
_SYCL_REFUSED = re.compile(r"can't allocate (\d{1,20}) Bytes of memory on device")
_VK_REFUSED = re.compile(r"(?:allocation of size|buffer of size) (\d{1,20})")


def _vk_req(x):
    """The refused buffer's size: the Case's request, else ggml's "buffer of size N" / Vulkan's "allocation of size N"."""
    return x.req or max([int(m.group(1)) for t in x.texts for m in _VK_REFUSED.finditer(t)] or [0])


def read(s, f, m, text, lineno, window):
    """facts.py's handler."""
    f["sycl_total"] = max(f.get("sycl_total") or 0, int(m.group(1)) * MiB)


def sycl_l0_cap(x) -> bool:
    """llama.cpp's SYCL backend refused one buffer over Level Zero's 4 GiB on a card that has more."""
    total = x.f.get("sycl_total")
    sizes = [int(m.group(1)) for t in x.texts for m in _SYCL_REFUSED.finditer(t)]
    return bool(total and sizes and L0_CAP < max(sizes) < total)


def sycl_said(x) -> str:
    size = max(int(m.group(1)) for t in x.texts for m in _SYCL_REFUSED.finditer(t))
    return (f"Level Zero allocates at most 4 GiB at once, and llama.cpp's SYCL backend asked for one buffer of "
            f"{size / GiB:.2f} GiB on a {x.f['sycl_total'] / GiB:.1f} GiB card: the cap refused it, not the card; set "
            "UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 before starting it (or fewer layers per buffer: a lower -ngl)")


def vulkan_cap(x) -> bool:
    """llama.cpp's Vulkan backend refused a buffer that, with every device buffer placed before it, fits the free memory
    it printed at start (one device)."""
    f = x.f
    if x.env.get("backend") != "vulkan" or len(f.get("ggml_devices") or {}) != 1 or not f.get("ggml_device_free") or not _vk_req(x):
        return False
    placed = sum(v for k, v in f["ggml_bufs"].items() if "CPU" not in k and "Host" not in k)
    return placed + _vk_req(x) <= f["ggml_device_free"]


def vulkan_said(x) -> str:
    f = x.f
    placed = sum(v for k, v in f["ggml_bufs"].items() if "CPU" not in k and "Host" not in k)
    return (f"Vulkan refused one {_vk_req(x) / GiB:.2f} GiB buffer although it and the {placed / GiB:.2f} GiB placed before it fit "
            f"the {f['ggml_device_free'] / GiB:.2f} GiB free at start: the device's cap on one allocation "
            "(maxMemoryAllocationSize / maxBufferSize), not the card; a smaller buffer (-ub, -b) passes")


def guide_kind(top, x_kind, params):
    """The event kind whose guide the Vulkan reading takes (vulkan-max-buffer lists ggml.vulkan_limit), else x_kind."""
    return "ggml.vulkan_limit" if top == "other" and params.get("vulkan_cap") else x_kind


def rows():
    """The rule rows (rules_other.py adds them): over the weights' and compute buffer's rows these logs fire (about 4 and 6
    points): the numbers rule out a card too small, which is what those rows assume."""
    from .rule_row import Rule
    return [Rule("other", 6.0, sycl_l0_cap, sycl_said), Rule("other", 7.0, vulkan_cap, vulkan_said)]
