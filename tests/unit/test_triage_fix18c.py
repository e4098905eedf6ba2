"""Session 18, task fix18c: the triage findings of review18b. Each test is written from the reviewer's example and failed
on the commit before its mend (the commit names the deliberate break that makes it fail again)."""
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.categories import frame_category


def _top(text):
    r = engine.triage_text(text)
    return [c["id"] for c in r["events"][-1]["causes"]]


def test_loss_plural_is_a_loss_function_too():
    # review18b #7: losses / compute_losses / CamelCase Losses are a loss over the batch like compute_loss
    for func in ("losses", "compute_losses", "get_losses_step", "MultiLosses", "sum_losses"):
        assert frame_category("/srv/app/train/trainer.py", func) == "activations", func
    # still not inside another word
    for func in ("lossless", "glosses", "flosses", "decode_lossless"):
        assert frame_category("/srv/app/codec.py", func) is None, func
