"""fix34 item 4: llama.cpp's marker rows claiming a ComfyUI log.

Each llama.cpp row of runtime_markers was checked against a ComfyUI log (its start-up lines, "got prompt", the
"!!! Exception during processing !!!" block or the ComfyUI Error Report, execution.py frames) holding one such line from a
custom node, around a torch failure, a driver error, cudaMallocAsync's and the CPU allocator's messages. ggml's lines
(ggml_cuda_init, ggml_backend_cuda_*, ggml-cuda.cu:, ggml_gallocr), llama_new_context_with_model, llama_context,
llama_kv_cache_init, load_tensors, print_info, llm_load_*, llama_model_loader (fix33's weak fact) and "main -m" never took
the runtime. The three RUNTIME_MARKERS rows did (ComfyUI's answer became llama.cpp's, with its guides): llama.cpp's
--mlock VirtualLock warning, its 2023 loader's "llama.cpp: loading model from", and its converter scripts and gguf-py
paths. They are now a weak hint in a ComfyUI log (runtime_markers.MARKERS_UNDER_COMFYUI), as fix33's loader lines are;
outside ComfyUI they name llama.cpp as before. Lines written here from llama.cpp's own format strings, not the corpus."""
import pytest

from support.triage_event import top

FAIL = ("CUDA out of memory. Tried to allocate 2.25 GiB. GPU 0 has a total capacity of 11.99 GiB of which 1.12 GiB is free. "
        "Of the allocated memory 9.61 GiB is allocated by PyTorch, and 0.52 GiB is reserved by PyTorch but unallocated.")

# one line a row family, as a custom node calling llama.cpp prints it
ROWS = {
    # src/llama-mmap.cpp llama_mlock::raw_lock: "warning: failed to VirtualLock %zu-byte buffer (after previously locking %zu bytes): %s"
    "virtuallock": "warning: failed to VirtualLock 33554432-byte buffer (after previously locking 4026531840 bytes): "
                   "Insufficient quota to complete the requested service.",
    # the 2023 loader (llama_file_loader): "llama.cpp: loading model from %s"
    "loader_2023": r"llama.cpp: loading model from C:\ComfyUI\models\LLM\wizardlm-7b.ggmlv3.q5_1.bin",
    # its converter script and gguf-py's own files in a traceback's frames
    "converter": '  File "/srv/ComfyUI/custom_nodes/gguf-convert/llama.cpp/convert_hf_to_gguf.py", line 5140, in main',
    "gguf_py": '  File "/srv/ComfyUI/custom_nodes/gguf-convert/llama.cpp/gguf-py/gguf/gguf_writer.py", line 441, in write_tensors_to_file',
}


def comfy_log(line):
    return ("Total VRAM 12282 MB, total RAM 32607 MB\n"
            "pytorch version: 2.5.1+cu124\n"
            "Device: cuda:0 NVIDIA GeForce RTX 4070 : cudaMallocAsync\n"
            "got prompt\n"
            f"{line}\n"
            "Requested to load AutoencoderKL\n"
            f"!!! Exception during processing !!! {FAIL}\n"
            "Traceback (most recent call last):\n"
            '  File "/srv/ComfyUI/execution.py", line 327, in execute\n'
            "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
            '  File "/srv/ComfyUI/comfy/sd.py", line 610, in decode\n'
            "    pixel_samples[x:x+batch_number] = self.process_output(self.first_stage_model.decode(samples))\n"
            f"torch.OutOfMemoryError: {FAIL}\n"
            "\n"
            "Prompt executed in 12.40 seconds\n")


def report_log(line):
    # the ComfyUI Error Report the frontend writes, with no start-up lines
    return (f"{line}\n"
            "# ComfyUI Error Report\n"
            "## Error Details\n"
            "- **Node ID:** 8\n"
            "- **Node Type:** VAEDecode\n"
            "- **Exception Type:** torch.OutOfMemoryError\n"
            f"- **Exception Message:** {FAIL}\n"
            "## Stack Trace\n"
            "```\n"
            '  File "/srv/ComfyUI/execution.py", line 327, in execute\n'
            "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
            "```\n")


@pytest.mark.parametrize("family", sorted(ROWS))
def test_a_llama_cpp_marker_line_from_a_custom_node_leaves_comfyui_its_log(family):
    for log in (comfy_log(ROWS[family]), report_log(ROWS[family])):
        cause, _, ev = top(log)
        assert ev["runtime"] == "comfyui", (family, log)
        assert cause == "vae-decode", family


@pytest.mark.parametrize("family", sorted(ROWS))
def test_outside_comfyui_the_row_still_names_llama_cpp(family):
    # the same line, then libstdc++'s terminate message (read as PyTorch's where nothing names a runtime)
    line = ROWS[family].replace("/srv/ComfyUI/custom_nodes/gguf-convert/", "/home/ren/src/")     # no ComfyUI folder
    _, _, ev = top(line + "\nterminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n")
    assert ev["runtime"] == "llama.cpp", family
