"""review24 item 5, method mtp: --speculative-config keys kv does not read (draft_tensor_parallel_size, max_model_len)
were dropped from the printed vllm command without a note on the mtp path (0d1e4f00 kept them for a separate drafter
only). They are now kept after the two kv reads and named in the same note. Breaking it: plan_checks.speculative_config
not keeping parse's "others" for mtp (checked once: both tests fail)."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB


def _plan(cfg):
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=65536, tensor_parallel_size=2,
                    speculative_config=cfg, vram=80 * GiB)


def test_mtp_keeps_unread_keys_in_the_command_and_names_them():
    r = _plan({"method": "mtp", "num_speculative_tokens": 3, "max_model_len": 4096, "draft_tensor_parallel_size": 1})
    assert ("--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":3,\"max_model_len\":4096,"
            "\"draft_tensor_parallel_size\":1}'") in r["command"]
    said = [n for n in r["notes"] if n.startswith("--speculative-config ")]
    assert said == ["--speculative-config draft_tensor_parallel_size, max_model_len: not read, the drafter is sized "
                    "without them (kept in the printed command)"]


def test_mtp_without_other_keys_prints_as_before_and_sizes_the_same():
    plain = _plan({"method": "mtp", "num_speculative_tokens": 3})
    assert "--speculative-config '{\"method\":\"mtp\",\"num_speculative_tokens\":3}'" in plain["command"]
    assert not [n for n in plain["notes"] if n.startswith("--speculative-config ")]
    more = _plan('{"method": "mtp", "num_speculative_tokens": 3, "max_model_len": 4096}')
    assert (more["weights"], more["kv_capacity_tokens"]) == (plain["weights"], plain["kv_capacity_tokens"])
    assert '"max_model_len":4096}' in more["command"]
