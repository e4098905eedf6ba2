"""(fixY) Omniverse Kit's renderer refused host memory: Kit logs the driver's VkResult by its name without the VK_ prefix
(fixV's device form, test_triage_fixv_vulkan.KIT: "[Error] [carb.graphics-vulkan.plugin] VkResult: ERROR_OUT_OF_DEVICE_MEMORY"),
so the Vulkan spec's other out-of-memory result, VK_ERROR_OUT_OF_HOST_MEMORY (-1, "a host memory allocation has failed"),
reads "VkResult: ERROR_OUT_OF_HOST_MEMORY" there: system RAM on Isaac Sim's run, with the Kit guide's host variant.
Before: the line alone was no failure at all, and with Kit's next line it read pytorch/cuda (generic.oom)."""
import re

import pytest

from gpu_garden.memory.triage.other_patterns import KIT_VK
from support.regex_time import cpu_limit, cpu_now
from support.triage_event import last_event
from test_triage_fixv_vulkan import KIT

SPEC_HOST = "VK_ERROR_OUT_OF_HOST_MEMORY"       # Vulkan spec, VkResult -1
KIT_HOST = KIT.replace("ERROR_OUT_OF_DEVICE_MEMORY", SPEC_HOST[len("VK_"):])
MB = 1 << 20


@pytest.mark.parametrize("text", [KIT_HOST, KIT_HOST.splitlines(True)[1], KIT_HOST.splitlines(True)[1].split("[Error] ")[1]],
                         ids=["kit-log", "line", "no-level"])
def test_kits_host_form_is_host_ram_on_isaac_sim(text):
    assert "VkResult: ERROR_OUT_OF_HOST_MEMORY" in text
    res, ev = last_event(text)
    assert (res["cause"], ev["kind"], ev.get("form"), ev["runtime"], ev["device_kind"]) == (
        "host-ram", "kit.vulkan", "host", "isaacsim", "cpu"), (res["cause"], ev)
    g = ev["guide"]
    assert (g["id"], g["title"]) == ("kit-vulkan-host", "Omniverse Kit's renderer ran out of system RAM (Isaac Sim, Isaac Lab)")
    md = g["markdown"]
    assert "--num_envs" in md and "--headless" in md and "swapon" in md
    assert "nvidia-smi" not in md and "PYTORCH_CUDA_ALLOC_CONF" not in md
    assert "host memory" in ev["causes"][0]["evidence"][0]
    assert "renderer (carb.graphics-vulkan) ran out of device memory" not in str(ev["causes"])   # the device row stays out


def test_the_device_form_keeps_fixvs_reading():
    res, ev = last_event(KIT)
    assert (res["cause"], ev["device_kind"], ev["guide"]["id"]) == ("other", "vulkan", "kit-vulkan")
    assert "form" not in ev


def test_kit_vk_is_linear_on_adversarial_lines():
    for text in ("VkResult: " * (MB // 10), "VkResult: ERROR_OUT_OF_" * (MB // 23), "VkResult: ERROR_OUT_OF_" + "HOST_" * (MB // 5),
                 "VKResult: ERROR_OUT_OF_HOST_MEMOR" * (MB // 32), "V" * MB + "Result: ERROR_OUT_OF_DEVICE_MEMORY"):
        t = cpu_now()
        KIT_VK.search(text)
        assert cpu_now() - t < cpu_limit(1.0), text[:40]
