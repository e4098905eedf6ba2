"""llama.cpp --fit builds (runtimes/llamacpp.py FIT_TARGET): without -ngl, llama-server offloads only what leaves its
--fit-target free on every GPU, 1024 MiB by default (common/common.h fit_params_target; "margin went 1024 -> 1186
MiB" when an MTP context was added to it, and a 4060 Laptop log ends "38 layers, 5665 MiB used, 1440 MiB free").
Hand-derived from the source: no log with the free memory just under the target was read."""
import pytest

from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


def _plan(version, vram_gib, **kw):
    return llm.plan(llm.describe(model="Qwen2.5-7B"), "llama.cpp", ctx=4096, weights_dtype="Q4_K_M",
                    vram=vram_gib * GiB, runtime_version=version, **kw)


def test_fit_builds_keep_one_gib_free():
    assert _plan("b7400", 8.0)["overhead"]["margin"] == 1024 * MiB
    assert _plan("b7399", 8.0)["overhead"]["margin"] == 256 * MiB           # older builds: 256 MiB or 2 %
    assert _plan("b7400", 8.0, ngl=99)["overhead"]["margin"] == 256 * MiB   # -ngl given: --fit leaves it alone
    split = _plan("b7400", 16.0, tensor_split=[1, 1])
    assert split["overhead"]["margin"] == 2 * 1024 * MiB                   # the target on each GPU


def test_a_load_inside_the_target_is_no_full_offload_on_a_fit_build():
    old = _plan("b6700", 6.0)
    need_old = old["total"] / GiB                                            # with the 256 MiB margin
    vram = need_old + 0.25                                                   # 0.25 GiB spare: < 1 GiB - 256 MiB
    assert _plan("b6700", vram)["fits_as_requested"]
    assert not _plan("b7400", vram)["fits_as_requested"]
