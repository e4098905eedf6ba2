"""Triage after batches 83-84 (first sight recorded at e0f2ebe: 2/6 and 3/3). Lines written from the runtimes' own message
formats (VideoHelperSuite's load_video_nodes.py, SGLang's scheduler message, vLLM's cumem allocator and its wake_up frames),
numbers and wording of the prose made up, expected values by hand."""
from support.triage_event import top


def test_vhs_load_video_memory_guard_is_host_ram():
    """VideoHelperSuite's Load Video sizes the frames it decodes against psutil's free system RAM (available + free swap) and
    raises its own RuntimeError when the video has more (Kosinkadink/ComfyUI-VideoHelperSuite#236), or refuses a Meta Batch
    larger than what fits: host RAM, on the CPU, ComfyUI's; the guide is the frame-count one."""
    for line, frames in (("Error occurred when executing VHS_LoadVideo: Memory limit hit after loading 812 frames. Stopping execution.\n", 812),
                         ("RuntimeError: Meta Batch set to 600 frames but only 415 can fit in memory\n", 600)):
        cause, conf, ev = top(line)
        assert cause == "host-ram", (line, ev["causes"])
        assert (ev["runtime"], ev["device_kind"]) == ("comfyui", "cpu"), (ev["runtime"], ev["device_kind"])
        assert ev["guide"]["id"] == "comfyui-vhs-frames", ev["guide"]["id"]
        assert f"{frames} frames" in ev["causes"][0]["evidence"][0], ev["causes"][0]["evidence"]
    # the guard's words without its numbers are no failure of it
    cause, _, ev = top("Error occurred when executing VHS_LoadVideo: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert ev["guide"]["id"] != "comfyui-vhs-frames"
