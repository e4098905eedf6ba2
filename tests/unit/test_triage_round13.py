"""Triage round 13: general readings of what a log shows, written from the runtimes' own strings (ComfyUI's weight
adapters, PyTorch's caching-allocator message forms), each with a control that must keep its old reading."""
from gpu_garden.memory.triage import engine as triage


def _top(log):
    res = triage.triage_text(log)
    assert res["found"], log
    ev = res["events"][-1]
    return res["cause"], {c["id"]: c["confidence"] for c in ev["causes"]}, ev


# --- a parameter named on the error line (comfy/weight_adapter/lora.py: logging.error("ERROR {} {} {}".format(self.name,
# key, e)) when merging a LoRA into a weight fails) ------------------------------------------------------------------

TORCH_MSG = ("CUDA out of memory. Tried to allocate 24.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 18.50 MiB is free. "
             "Including non-PyTorch memory, this process has 7.77 GiB memory in use. Of the allocated memory 7.32 GiB is allocated "
             "by PyTorch, and 402.17 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
             "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")


def test_lora_patch_naming_its_weight_is_the_weights():
    # the slack is 5 % of the card and 16x the request: the cache-slack rows give fragmentation their most (6.2)
    cause, c, ev = _top("ERROR lora diffusion_model.input_blocks.4.1.transformer_blocks.0.attn1.to_q.weight " + TORCH_MSG + "\n")
    assert cause == "weights-exceed-vram", c
    assert any("diffusion_model.input_blocks.4.1" in e for e in ev["causes"][0]["evidence"])


def test_same_message_without_a_parameter_keeps_the_cache_reading():
    cause, c, _ = _top(TORCH_MSG + "\n")
    assert cause == "fragmentation", c
