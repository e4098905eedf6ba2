"""fix33 (review28 item 7): a std::bad_alloc after llama.cpp's GGUF loader lines named PyTorch.

llama.cpp's GGUF loader prints its own lines, prefixed with its functions' names, as it opens a model file
("llama_model_loader: loaded meta data with ...", "llama_model_loader: - kv ...", "- type ...", and before 2025
"llm_load_print_meta: ..." and "llm_load_tensors: ..."); libstdc++'s terminate message after them is llama.cpp's, with
llama.cpp's host-RAM guide. The lines only say llama.cpp loaded a model: llama-cpp-python prints them inside a ComfyUI
node too, where a torch OutOfMemoryError stays ComfyUI's. Lines written here from llama.cpp's own formats (a CPU build
loading a 13B Q5_K_M), not copied from the corpus."""
from support.triage_event import top

THROW = ("terminate called after throwing an instance of 'std::bad_alloc'\n"
         "  what():  std::bad_alloc\n"
         "Aborted (core dumped)\n")
# a 2025 build: the loader's lines, then print_info: and load_tensors: (kept to lines without the scanner's other words)
MODERN = ("build: 5120 (4f1c2a7e) with cc (GCC) 14.2.1 for x86_64-pc-linux-gnu\n"
          "llama_model_loader: loaded meta data with 27 key-value pairs and 363 tensors from /data/llm/orca-2-13b.Q5_K_M.gguf (version GGUF V3 (latest))\n"
          "llama_model_loader: - kv   0:                       general.architecture str              = llama\n"
          "llama_model_loader: - kv   1:                               general.name str              = orca-2-13b\n"
          "llama_model_loader: - type  f32:   81 tensors\n"
          "llama_model_loader: - type q5_K:  241 tensors\n"
          "print_info: arch             = llama\n"
          "load_tensors: loading model tensors, this can take a while... (mmap = false)\n")
# a 2024 build: the same loader's first line, then its llm_load_print_meta: and llm_load_tensors: lines
OLDER = ("llama_model_loader: loaded meta data with 24 key-value pairs and 363 tensors from ./orca-2-13b.Q5_K_M.gguf (version GGUF V3 (latest))\n"
         "llm_load_print_meta: arch             = llama\n"
         "llm_load_print_meta: n_layer          = 40\n"
         "llm_load_tensors: ggml ctx size =    0.14 MiB\n")


def test_bad_alloc_after_the_gguf_loader_is_llama_cpps():
    cause, scores, ev = top(MODERN + THROW)
    assert ev["runtime"] == "llama.cpp", ev["runtime"]
    assert cause == "host-ram", scores
    assert ev["guide"]["id"] == "llamacpp-host-ram", ev["guide"]["id"]


def test_loader_lines_alone_name_it():
    """Only the loader's own prefixed lines (no build line, no print_info:): still llama.cpp."""
    _, _, ev = top("".join(l + "\n" for l in MODERN.splitlines()[1:6]) + THROW)
    assert ev["runtime"] == "llama.cpp", ev["runtime"]


def test_older_gguf_builds_lines_name_it():
    _, _, ev = top(OLDER + THROW)
    assert ev["runtime"] == "llama.cpp", ev["runtime"]
    assert ev["guide"]["id"] == "llamacpp-host-ram", ev["guide"]["id"]


def test_modern_loader_is_not_round_70s_header_failure():
    """Round 70's header rule reads the pre-GGUF loader only: a GGUF load's bad_alloc stays host-ram."""
    cause, scores, ev = top(MODERN + THROW)
    assert scores.get("other", 0) < scores["host-ram"], scores
    assert "llamacpp-file-format" not in [f["id"] for f in ev["guide"]["faqs"]]


def test_a_comfyui_node_loading_a_gguf_leaves_a_torch_oom_comfyuis():
    """llama-cpp-python in a ComfyUI node prints the loader's lines; a VAE decode's torch OutOfMemoryError later is ComfyUI's."""
    log = ("Total VRAM 12288 MB, total RAM 32693 MB\n"
           "pytorch version: 2.6.0+cu124\n"
           "Device: cuda:0 NVIDIA GeForce RTX 3060 : cudaMallocAsync\n"
           + "".join(l + "\n" for l in MODERN.splitlines()[1:4]) +
           "!!! Exception during processing !!! Allocation on device\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/ComfyUI/execution.py", line 327, in execute\n'
           "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
           '  File "/opt/ComfyUI/comfy/sd.py", line 295, in decode\n'
           "    pixel_samples[x:x+batch_number] = self.process_output(self.first_stage_model.decode(samples))\n"
           "torch.OutOfMemoryError: Allocation on device\n")
    _, _, ev = top(log)
    assert ev["runtime"] == "comfyui", ev["runtime"]


def test_a_loader_word_in_prose_without_its_format_names_nothing():
    """The row asks for the loader's own continuation ("loaded meta data with N", "- kv N", "- type X"), not the bare prefix."""
    _, _, ev = top("I grepped for llama_model_loader: nothing came up\n" + THROW)
    assert ev["runtime"] != "llama.cpp", ev["runtime"]
