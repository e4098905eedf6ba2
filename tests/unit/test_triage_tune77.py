"""Round 77 (batches 194-199, 202-205): FlashInfer's early workspace overflow without sizes ("Out of workspace memory in
AlignedAlloactor", other_patterns.FLASHINFER_WS), a PyTorch request cut after its size and past any card
(case.impossible_unsized), and the Point Cloud Library's console lines naming the runtime (runtime_markers). Modelled on
flashinfer-ai/flashinfer#362 (vLLM workers under CUDA-graph set-up), InternRobotics/EmbodiedScan#52 (MinkowskiEngine's
overflowed nnz) and zhangxy0517/3D-Registration-with-Maximal-Cliques#29 (std::bad_alloc after PCL's VoxelGrid warning);
sizes, paths and prose rewritten."""
from gpu_garden.memory.triage import engine as triage


def _head(text):
    res = triage.triage_text(text)
    assert res["found"]
    return res, res["events"][res["headline"]]


# --- FlashInfer's early workspace message ---------------------------------------------------------------------------
def _flashinfer(word):
    w = "(VllmWorkerProcess pid=4121) ERROR 03-11 09:12:40 multiproc_worker_utils.py:120] "
    return (f"{w}    self._wrapper.begin_forward(\n"
            f"{w}RuntimeError: Out of workspace memory in {word}\n"
            f"{w}Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks\n")


def test_old_flashinfer_workspace_message_is_the_workspace_not_the_gpu():
    res, ev = _head(_flashinfer("AlignedAlloactor"))       # the class name as those releases misspelt it
    assert ev["kind"] == "flashinfer.workspace" and ev["device_kind"] == "cuda"
    assert res["cause"] == "other"
    assert ev["runtime"] == "vllm"
    assert ev["numbers"] == {}                              # it prints no size


def test_old_flashinfer_message_with_the_name_spelt_right_reads_the_same():
    res, ev = _head(_flashinfer("AlignedAllocator"))
    assert ev["kind"] == "flashinfer.workspace" and res["cause"] == "other"


def test_old_flashinfer_explanation_names_no_size():
    res, ev = _head(_flashinfer("AlignedAlloactor"))
    text = ev["causes"][0]["evidence"][0]
    assert text.startswith("FlashInfer's workspace") and "prints no size" in text


# --- a request cut after its size, past any card ---------------------------------------------------------------------
def _cut(size, frames=""):
    return frames + f"RuntimeError: CUDA out of memory. Tried to allocate {size}\n"


def test_cut_request_past_any_card_is_a_size_computed_wrong():
    res, ev = _head(_cut("2097151.50 GiB"))
    assert ev["kind"] == "torch.cuda"
    assert res["cause"] == "other"


def test_cut_request_a_card_could_nearly_hold_is_still_a_working_tensor():
    # 3.5 TiB: under 16 times the largest card, read as before (a working tensor too large)
    res, _ = _head(_cut("3584.00 GiB"))
    assert res["cause"] != "other"


def test_cut_request_of_an_ordinary_size_is_unchanged():
    res, _ = _head(_cut("1.25 GiB"))
    assert res["cause"] != "other"


def test_cut_request_past_any_card_inside_attention_is_a_real_tensor():
    frames = ("Traceback (most recent call last):\n"
              '  File "/srv/app/models/video_dit.py", line 311, in forward\n'
              "    out = self.attn(x)\n"
              '  File "/srv/app/models/video_dit.py", line 88, in scaled_dot_product_attention\n'
              "    w = torch.softmax(q @ k.transpose(-2, -1) * self.scale, dim=-1)\n")
    res, _ = _head(_cut("9216.00 GiB", frames))
    assert res["cause"] != "other"


# --- the Point Cloud Library names its runtime -----------------------------------------------------------------------
BAD_ALLOC = ("Matching descriptors...\n"
             "terminate called after throwing an instance of 'std::bad_alloc'\n"
             "  what():  std::bad_alloc\n")


def test_pcl_console_line_names_the_runtime():
    res, ev = _head("[pcl::PCDReader::read] Could not find file 'scan_b.pcd'.\nLoaded 2 clouds.\n" + BAD_ALLOC)
    assert ev["runtime"] == "pcl"
    assert res["cause"] == "host-ram"


def test_bad_alloc_without_pcl_lines_keeps_its_default_runtime():
    _, ev = _head("Loaded 2 clouds.\n" + BAD_ALLOC)
    assert ev["runtime"] != "pcl"
