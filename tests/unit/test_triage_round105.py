"""Triage round 105 (task tune105: batches 543-554 after first sight), written from the runtimes' own message formats:
- torch-directml's refusal quoted as its head alone, "Could not allocate tensor with N bytes" (or "... bytes.") ending the
  line, without the second sentence "There is not enough GPU video memory available!": DirectML's out of memory, its
  request in bytes.
- PyTorch's out-of-memory error carried at the end of FSDP's full state_dict clone warning, "Failed to clone() tensor with
  name <fqn>. This may mean that this state_dict entry could point to invalid memory regions after returning from
  state_dict() call if this parameter is managed by FSDP. Please check clone implementation of <fqn>. Error: CUDA out of
  memory. ...": the full state_dict gathered on the card (unsharded weights), weights-exceed-vram.
The sizes, names and lines around them are made up in the messages' layout; the expected values are worked out by hand."""

from gpu_garden.memory.triage import error_patterns as EP
from gpu_garden.memory.triage import fact_patterns as FP

from support.triage_event import kinds as _kinds, read as _read, top as _top
from support.regex_time import assert_each_fast
from support.regex_time import cpu_limit, cpu_now

_MIB = 1024 ** 2


def test_directml_head_alone_is_a_directml_oom_with_its_request():
    for line in ("Could not allocate tensor with 1610612736 bytes\n",
                 "RuntimeError: Could not allocate tensor with 1610612736 bytes.\n",
                 "step 12: Could not allocate tensor with 1610612736 bytes  \n"):
        _, kind, runtime, dev, nums = _read("training the tiny model, micro batch 16\n" + line)
        assert (kind, runtime, dev) == ("torch.directml", "pytorch", "directml"), line
        assert nums == {"requested": 1610612736}, line
    # the whole message and the elided one read as before
    assert EP.DML.search("Could not allocate tensor with 4096 bytes. There is not enough GPU video memory available!").group(1) == "4096"
    assert EP.DML.search("Could not allocate tensor with 4096 bytes. There ... available!").group(1) == "4096"
    # the head with other words after it on its line is not the message (a sentence of prose going on)
    assert EP.DML.search("Could not allocate tensor with 4096 bytes because the cache was full") is None
    assert EP.DML.search("Could not allocate tensor with 4096 bytes, retrying on the CPU") is None


_FSDP_WARN = (
    "/usr/lib/python3.11/site-packages/torch/distributed/fsdp/_state_dict_utils.py:350: UserWarning: Failed to clone() tensor "
    "with name _fsdp_wrapped_module.model.layers.{layer}.self_attn.o_proj.weight. This may mean that this state_dict entry "
    "could point to invalid memory regions after returning from state_dict() call if this parameter is managed by FSDP. Please "
    "check clone implementation of _fsdp_wrapped_module.model.layers.{layer}.self_attn.o_proj.weight. Error: ")
_OOM = ("CUDA out of memory. Tried to allocate 64.00 MiB (GPU 1; 23.65 GiB total capacity; 21.40 GiB already allocated; "
        "30.00 MiB free; 22.10 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
        "max_split_size_mb to avoid fragmentation.\n")
_TRAIN = "{'loss': 1.21, 'learning_rate': 2e-05, 'epoch': 2.0}\n100%|##########| 400/400 [20:00<00:00,  3.00s/it]\n"


def test_fsdp_clone_warning_carrying_the_oom_reads_weights():
    text = _TRAIN + _FSDP_WARN.format(layer=30) + _OOM
    cause, scores, ev = _top(text)
    assert ev["kind"] == "torch.cuda"
    assert ev["numbers"]["requested"] == 64 * _MIB
    assert max(scores, key=scores.get) == "weights-exceed-vram", scores
    # (the parameter's name on the line reads weights already; the row names the full state_dict and its remedy)
    said = " ".join(e for c in ev["causes"] if c["id"] == "weights-exceed-vram" for e in c["evidence"])
    assert "full state_dict" in said and "offload_to_cpu=True" in said, said
    # the same training run's message without FSDP's warning: not read so
    plain = _top(_TRAIN + "RuntimeError: " + _OOM)[1]
    assert max(plain, key=plain.get) != "weights-exceed-vram", plain


def test_fsdp_clone_warning_wrapped_over_lines_reads_weights():
    # the warning wrapped as a terminal or a quote breaks it: the error on the fourth line after the warning's head
    wrapped = (_FSDP_WARN.format(layer=7).replace(" This may mean", "\nThis may mean").replace(" state_dict() call", "\nstate_dict() call")
               .replace(" Please check", "\nPlease check").replace(" Error: ", "\nError: "))
    scores = _top(_TRAIN + wrapped + _OOM)[1]
    assert max(scores, key=scores.get) == "weights-exceed-vram", scores


def test_fsdp_clone_warning_speaks_only_for_its_own_error():
    # a clone warning many lines before an unrelated out of memory (the run went on) says nothing of it
    far = _FSDP_WARN.format(layer=3) + "ValueError: bad shape\n" + "step log line\n" * 12 + "RuntimeError: " + _OOM
    scores = _top(_TRAIN + far)[1]
    assert max(scores, key=scores.get) != "weights-exceed-vram", scores


def test_round_105_patterns_stay_linear():
    mb = 1 << 20
    fsdp = dict(FP.FACTS)["fsdp_clone"]
    assert fsdp.search("UserWarning: Failed to clone() tensor with name x.weight. Error: ")
    assert fsdp.search("Failed to clone tensor x") is None
    cases = [
        (EP.DML.search, ("Could not allocate tensor with " * (mb // 30), "Could not allocate tensor with 1" + " " * mb,
                         "Could not allocate tensor with 12 bytes" + "." * mb, "Could not allocate tensor with 12 bytes." + " \t" * (mb // 2) + "x",
                         "Could not allocate tensor with " + "9" * mb)),
        (fsdp.search, ("Failed to clone() tensor with name" * (mb // 34), "Failed to clone() " * (mb // 18))),
    ]
    assert_each_fast(cases)
    t = cpu_now()
    _kinds("Could not allocate tensor with 12 bytes" + " " * mb + "\n"
           + "Failed to clone() tensor with name " * (mb // 35) + "\n")
    assert cpu_now() - t < cpu_limit(10.0)
