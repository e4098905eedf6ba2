"""Review rev65a of task tri80 (issue 14): two logs where no earlier copy of a custom loader's model can exist. tri80's row
(reverted) read both as `leak`; the top answer must not be leak. Inputs written by hand in ComfyUI's and a custom
loader's own line forms (the reviewer's reproductions, /tmp/rev65a/test_tri80.py); none taken from a corpus file."""
from support.triage_event import top

GOT = "got prompt\n"
DONE = "Prompt executed in 41.27 seconds\n"
SDXL_RUN = ("Requested to load SDXLClipModel\nloaded completely 9.5 1560.80 True\n"
            "Requested to load SDXL\nloaded completely 9.5 4897.05 True\n"
            "100%|██████████| 20/20 [00:06<00:00,  3.10it/s]\n"
            "Requested to load AutoencoderKL\nloaded completely 9.5 159.56 True\n")
CUSTOM_LOAD = ("GPU 0 (NVIDIA GeForce RTX 3090) Memory: 24576.0 MiB\n"
               "[2025-05-02 21:14:09.112] [info] Initializing QuantizedFluxModel on device 0\n"
               "[2025-05-02 21:14:09.140] [info] Loading weights from /srv/models/flux-int4/transformer_blocks.safetensors\n")
FAIL = ("!!! Exception during processing !!! CUDA error: out of memory\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/ComfyUI/execution.py", line 327, in execute\n'
        "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
        "RuntimeError: CUDA error: out of memory\n")
RESTART = ("\n** ComfyUI startup time: 2025-05-02 21:13:40.118\n** Python version: 3.12.9\n"
           "Total VRAM 24576 MB, total RAM 64228 MB\npytorch version: 2.7.0+cu128\nSet vram state to: NORMAL_VRAM\n"
           "Device: cuda:0 NVIDIA GeForce RTX 3090 : cudaMallocAsync\nUsing pytorch attention\n"
           "Starting server\n\nTo see the GUI go to: http://127.0.0.1:8188\n")


def test_a_restart_between_the_finished_prompt_and_the_custom_load_is_not_a_leak():
    # a new process keeps no node object: the first load after the restart has no previous copy beside it
    cause, conf, _ = top(GOT + SDXL_RUN + DONE + RESTART + GOT + CUSTOM_LOAD + FAIL)
    assert cause != "leak", conf


def test_a_first_custom_load_after_a_prompt_of_comfyuis_own_loader_is_not_a_leak():
    # prompt 1 ran only ComfyUI's loader (which frees other models first); prompt 2 is the custom loader's first load
    cause, conf, _ = top(GOT + SDXL_RUN + DONE + GOT + CUSTOM_LOAD + FAIL)
    assert cause != "leak", conf
