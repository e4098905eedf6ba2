"""fix34 item 3: llama-cpp-python's own exception in a Python traceback named PyTorch.

llama-cpp-python (llama_cpp/_internals.py) raises ValueError("Failed to load model from file: <path>") when llama.cpp's
loader returns no model and ValueError("Failed to create llama_context") when it returns no context. A log of llama.cpp's
own failure line then that traceback (frames in llama_cpp/llama.py and llama_cpp/_internals.py) was answered runtime
pytorch with PyTorch's guide. Now llama.cpp (runtime_markers.NAMED_RUNTIMES, with NAMED_FRAMES: the binding's frames),
with llama.cpp's guide; a ComfyUI node that calls llama-cpp-python stays ComfyUI's. Written here from llama-cpp-python's
source strings and llama.cpp's loader lines, not copied from the corpus."""
from support.triage_event import top


def _traceback(root, sep, raise_line, error, script="chat.py", call="llm = Llama(model_path=MODEL, n_gpu_layers=-1)"):
    site = f"{root}{sep}site-packages{sep}llama_cpp{sep}"
    return ("Traceback (most recent call last):\n"
            f'  File "{root}{sep}{script}", line 14, in <module>\n'
            f"    {call}\n"
            f'  File "{site}llama.py", line 369, in __init__\n'
            "    internals.LlamaModel(\n"
            f'  File "{site}_internals.py", line 62, in __init__\n'
            f"    {raise_line}\n"
            f"{error}\n")


LOAD = _traceback("/home/ren/bot/.venv/lib/python3.12", "/", 'raise ValueError(f"Failed to load model from file: {path_model}")',
                  "ValueError: Failed to load model from file: /data/gguf/mixtral-8x7b-instruct.Q5_K_M.gguf")
CONTEXT = _traceback(r"C:\Users\ren\bot\venv\Lib", "\\", 'raise ValueError("Failed to create llama_context")',
                     "ValueError: Failed to create llama_context")
BAD_ALLOC = "llama_model_load: error loading model: std::bad_alloc\nllama_load_model_from_file: failed to load model\n"
OUT_OF_MEMORY = "error loading model: out of memory\n"


def test_a_llama_cpp_python_load_failure_is_llama_cpps():
    cause, _, ev = top(BAD_ALLOC + LOAD)
    assert ev["runtime"] == "llama.cpp" and cause == "host-ram"
    assert ev["guide"]["id"] == "llamacpp-host-ram"


def test_a_llama_cpp_python_context_failure_is_llama_cpps():
    _, _, ev = top(OUT_OF_MEMORY + CONTEXT)
    assert ev["runtime"] == "llama.cpp"
    assert "PyTorch" not in ev["guide"]["title"]


def test_the_same_words_without_the_bindings_frames_name_nothing_new():
    # a script of its own raising the same words (no llama_cpp/ frames) keeps the reading it had
    own = LOAD.replace("site-packages/llama_cpp/llama.py", "site-packages/mybot/loader.py") \
              .replace("site-packages/llama_cpp/_internals.py", "site-packages/mybot/model.py")
    _, _, ev = top(BAD_ALLOC + own)
    assert ev["runtime"] == "pytorch"


def test_a_comfyui_node_calling_llama_cpp_python_stays_comfyui():
    comfy = ("got prompt\n" + BAD_ALLOC +
             "!!! Exception during processing !!! Failed to load model from file: /srv/ComfyUI/models/LLavacheckpoints/x.gguf\n"
             + _traceback("/srv/ComfyUI/venv/lib/python3.11", "/", 'raise ValueError(f"Failed to load model from file: {path_model}")',
                          "ValueError: Failed to load model from file: /srv/ComfyUI/models/LLavacheckpoints/x.gguf",
                          script="custom_nodes/vlm-nodes/loader.py", call="llm = Llama(model_path=path, n_ctx=n_ctx)")
             .replace("Traceback (most recent call last):\n", "Traceback (most recent call last):\n"
                      '  File "/srv/ComfyUI/execution.py", line 327, in execute\n'
                      "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n")
             + "\nPrompt executed in 2.31 seconds\n")
    _, _, ev = top(comfy)
    assert ev["runtime"] == "comfyui"
