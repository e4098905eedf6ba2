"""Session 18, task regB: weights-exceed-vram vs activations and the phase groups. Each test is written from the machine
lines of a corpus case (named beside it) and fails when its rule is broken on purpose (the commit names the break)."""
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.categories import frame_category


def test_loss_frame_is_the_batch_working_tensor():
    # merlinyan05/HuChatFun docs/troubleshooting.md (corpus batch-52): a QLoRA run's evaluation step dies in transformers'
    # causal-LM loss, where the logits are cast to float32, with a bare CUDA error (no allocator numbers). The loss frame
    # names the batch's logits as what was being allocated, not pinned host RAM
    log = ('File "transformers/loss/loss_utils.py", line 55, in ForCausalLMLoss\n'
           "    logits = logits.float()\n"
           "torch.AcceleratorError: CUDA error: out of memory\n")
    res = engine.triage_text(log)
    assert res["cause"] == "activations"
    assert frame_category("/srv/app/train/trainer.py", "compute_loss") == "activations"
    # PyTorch's own frames stay unread (its functional cross_entropy sits under every loss, weights or not)
    assert frame_category("/usr/lib/python3/site-packages/torch/nn/functional.py", "cross_entropy") is None
