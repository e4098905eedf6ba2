"""fix66f: mend review rev66b's findings on fix66c (guides and commands; issue 14). These change what a guide and its
commands say, never which cause is named (test_triage_unseen keeps the answers). Each test failed on fix66c's merge
(d70b622f) unless it says it is a regression check.

The logs are written here, modelled on the reviewer's repros (/tmp/rev66b/logs) and the public threads they follow
(numbers exact, prose and paths rewritten)."""
import pytest

from gpu_garden.memory.triage import engine, guides

PORTABLE = r".\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build"


def _answer(text):
    res = engine.triage_text(text)
    return res["cause"], res["events"][res["headline"]]


def _cmds(ev):
    return [c["text"] for c in ev["guide"]["commands"]]


# --- 1. (rev66b F1) a 2 GiB discrete card keeps the weights fixes; the carve-out advice needs an iGPU sign --------------

def _comfy_2g(device, kind="CUDA", backend_path="D:\\ComfyUI_windows_portable\\ComfyUI"):
    oom = (f"{kind} out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 2.00 GiB of which 0 bytes is "
           "free. Of the allocated memory 1.60 GiB is allocated by PyTorch, and 60.00 MiB is reserved by PyTorch but "
           "unallocated.")
    return ("Total VRAM 2048 MB, total RAM 16310 MB\npytorch version: 2.5.1+cu124\nSet vram state to: LOW_VRAM\n"
            f"Device: {device}\ngot prompt\nmodel_type EPS\nRequested to load BaseModel\nLoading 1 new model\n"
            f"!!! Exception during processing !!! {oom}\nTraceback (most recent call last):\n"
            f'  File "{backend_path}\\execution.py", line 317, in execute\n'
            f'  File "{backend_path}\\nodes.py", line 1429, in sample\n'
            f"torch.OutOfMemoryError: {oom}\n")


@pytest.mark.parametrize("device", ["cuda:0 NVIDIA GeForce GT 1030 : cudaMallocAsync",
                                    "cuda:0 NVIDIA GeForce MX250 : native"])
def test_a_2gib_discrete_card_keeps_fix_1_to_3(device):
    cause, ev = _answer(_comfy_2g(device))
    g = ev["guide"]
    assert g["id"] == "comfyui-weights"
    assert "Fix 1" in g["markdown"] and "carve-out" not in g["markdown"], g["markdown"]
    assert not any(f["id"] == "faq-igpu-carveout" for f in g["faqs"])


def test_a_2gib_discrete_card_in_a_script_keeps_fix_1_to_3():
    text = ("Traceback (most recent call last):\n"
            '  File "C:\\Users\\me\\proj\\train.py", line 40, in <module>\n    model.to("cuda")\n'
            "RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 2.00 GiB total capacity; 1.72 GiB "
            "already allocated; 0 bytes free; 1.74 GiB reserved in total by PyTorch)\n")
    cause, ev = _answer(text)
    g = ev["guide"]
    assert g["id"] == "pytorch-weights"
    assert "Fix 1 - load in half precision" in g["markdown"] and "carve-out" not in g["markdown"]
    assert not g["faqs"] or not any(f["id"] == "faq-igpu-carveout" for f in g["faqs"])


def test_an_apu_named_by_comfyui_gets_the_carveout_advice():
    """Regression check: an AMD APU under ROCm as ComfyUI names it ("AMD Radeon(TM) Graphics") keeps the carve-out
    paragraph and note."""
    cause, ev = _answer(_comfy_2g("cuda:0 AMD Radeon(TM) Graphics : native", kind="HIP", backend_path="/root/ComfyUI")
                        .replace("2.5.1+cu124", "2.5.1+rocm6.2"))
    g = ev["guide"]
    assert "larger carve-out" in g["markdown"] and "Fix 1" not in g["markdown"]
    assert [f["id"] for f in g["faqs"]] == ["faq-igpu-carveout"]


# --- 2. (rev66b F2) allocation-refused: the carve-out note only with an iGPU sign ---------------------------------------

H200_REFUSED = ("$ vllm serve Qwen/Qwen2.5-32B-Instruct --max-model-len 32768\n"
                "INFO 12-24 08:49:02 [api_server.py:1772] vLLM API server version 0.13.0\n"
                "ERROR 12-24 08:50:35 [core.py:866] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 MiB. "
                "GPU 0 has a total capacity of 139.72 GiB of which 60.69 MiB is free. Process 691170 has 139.65 GiB memory "
                "in use. Of the allocated memory 139.21 GiB is allocated by PyTorch, and 12.81 MiB is reserved by PyTorch "
                "but unallocated.\n")


def test_an_h200_allocation_refused_answer_has_no_carveout_note():
    cause, ev = _answer(H200_REFUSED)
    g = ev["guide"]
    assert not any(f["id"] == "faq-igpu-carveout" for f in g["faqs"]), (g["id"], [f["id"] for f in g["faqs"]])
    assert "UMA frame buffer" not in g["markdown"] + "".join(f["markdown"] for f in g["faqs"])


def test_allocation_refused_lists_the_carveout_note_only_with_an_igpu_sign():
    all_ = guides.load_all()
    assert [f["id"] for f in guides.render(all_["allocation-refused"], {})["faqs"]] == []
    assert [f["id"] for f in guides.render(all_["allocation-refused"], {"igpu": True})["faqs"]] == ["faq-igpu-carveout"]
    assert guides.render(all_["allocation-refused"], {"igpu": True, "fraction_cap": True})["faqs"] == []
