"""kv-accuracy round 68 (task ellm46, the regression set, no new batch). Expected values are worked here from the
model's geometry and vLLM's source, not taken from kv."""
import pytest

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import parse_version, version_note
from gpu_garden.memory.units import GiB

BUILD = "0.1.dev1+ge08a6f3ae"  # jethac's GB10 fork image of batch 73 (a shallow checkout: dev1, no tag in reach)


# --- an untagged build: the release it is based on, stated by the user --------------------------------------------
# setuptools-scm prints a checkout with no release tag in reach as 0.1.devN+g<hash>: it names a commit, and kv reads it
# as the newest release. The user may now state the release the build is based on after it.

@pytest.mark.parametrize("text, want", [
    (f"{BUILD} based on 0.23.0", (0, 23, 0)),
    (f"{BUILD} based on v0.24.1", (0, 24, 1)),
    ("0.1.dev19754+g3a0914114 (the qwen38 image) based on 0.26.0rc1", (0, 26, -1, 1 << 30, 1)),
    ("0.0.0.dev1+gd91c3682b based on 0.5.10.post1", (0, 5, 10)),  # SGLang's fallback form
])
def test_untagged_build_reads_as_the_release_it_is_stated_to_be_based_on(text, want):
    assert parse_version(text, "vllm") == want
    note = version_note(text, "vllm")
    assert "untagged build" in note and "stated to be based on" in note


@pytest.mark.parametrize("text", [BUILD, f"{BUILD} (June 2026)", f"{BUILD} based on the author's branch"])
def test_untagged_build_without_a_release_stays_the_newest_and_says_how_to_state_one(text):
    assert parse_version(text, "vllm") is None
    note = version_note(text, "vllm")
    assert "names a commit" in note and "read as the newest release" in note
    assert f"'{BUILD} based on 0.23.0'" in note  # how to state the base


def test_a_tagged_version_is_not_read_from_a_based_on_phrase():
    # only an untagged build's first word gives way to the stated base: a release or a dev build of one is its own
    assert parse_version("0.20.1.dev0+g101584af0 based on 0.19.0", "vllm") == (0, 20, 0, 1 << 30, -1)
    assert parse_version("0.25.1 based on 0.23.0", "vllm") == (0, 25, 1)


# Gemma-4-31B (60 layers, sliding window 1024) with its vision tower, as batch 73's GB10 row: vLLM 0.25.1 raises a
# default max_num_batched_tokens to the video item, 32 x (70 + 2 + 6) = 2496 (runtimes/vllm.py MM_PREFIX_FLOOR); a
# sliding layer then holds ceil((1023 + B) / 16) + 1 blocks of 16 tokens a request:
#   B = 2496, two in flight: (ceil(6015 / 16) + 1) x 16 = 377 x 16 = 6032 cells (the newest release's reading, dsv4d)
#   B = 2048: (ceil(3071 / 16) + 1) x 16 = 193 x 16 = 3088 cells (a build stated to be based on 0.24.0: no raise)
def _sliding_cells(version):
    spec = llm.describe(model="google/gemma-4-31B-it")
    res = llm.plan(spec, "vllm", ctx=8192, kv_dtype="fp8", weights_dtype="bf16", vram=121.63 * GiB,
                   gpu_memory_utilization=0.72, gpu_name="NVIDIA GB10", runtime_version=version)
    return res["kv_detail"]["sliding_cells"], res["notes"]


def test_a_stated_base_before_0_25_1_keeps_the_default_batch():
    cells, notes = _sliding_cells(f"{BUILD} based on 0.24.0")
    assert cells == 193 * 16
    assert any("read as 0.24.0, the release it is stated to be based on" in n for n in notes)
    cells, notes = _sliding_cells(BUILD)  # no base stated: the newest release, which raises it
    assert cells == 377 * 16
    assert any("read as the newest release" in n for n in notes)
