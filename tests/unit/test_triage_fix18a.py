"""Session 18, task fix18a: the triage findings of review18a. Each test is written from the reviewer's example and failed
on the commit before its mend (the commit names the deliberate break that makes it fail again)."""
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.categories import frame_category


def _top(text):
    r = engine.triage_text(text)
    return [c["id"] for c in r["events"][-1]["causes"]]


def test_loss_is_matched_as_a_word_part_not_inside_other_words():
    # review18a #7: "loss" inside lossless / gloss / floss is no loss function
    for func in ("decode_lossless", "gloss_lookup", "floss"):
        assert frame_category("/srv/app/codec.py", func) is None, func
    # a loss as a word part split by _ or ending the name stays the batch's working tensor
    for func in ("compute_loss", "loss_fn", "ForCausalLMLoss", "loss", "dpo_loss_step", "train_loss"):
        assert frame_category("/srv/app/train/trainer.py", func) == "activations", func
