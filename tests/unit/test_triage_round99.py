"""Triage round 99 (task tune99: batches 460-482 after first sight), written from PyTorch's own message formats:
- PyTorch's 2.x message quoted with its middle elided or cut, keeping the request, the card's total and free figures and
  only "this process has N memory in use" (no "allocated by PyTorch", no reserved figure, no other process): where N is the
  card less free within a sliver (predicates.SLIVER) and the request is a layer's tensor (under predicates.OWN_LAYER_SHARE,
  half a percent of the card), a plain script's card is full of what it placed before, most often the model: weights-exceed-vram,
  as the same message cut before the process figure reads (predicates.cut_full). A request of a percent of the card, a
  process holding well under the card, or another process listed, is not read so.
- A traceback's source line moving an autoencoder whole to the device ("autoencoder.to(device)") reads as the weights placed,
  as "model.to(device)" does; a batch's tensor and a name that says nothing ("temp.to(device)") do not.
- "Process has N memory in use" with no PID (the sentence quoted without "Including non-PyTorch memory, this"; a note's "Process
  had"), alone on its line or in the message's line: this process's own figure (a listed other process names its PID).
The sizes and the lines around them are made up in the message's layout; the expected values are worked out by hand."""
from support.triage_event import read as _read, top as _top  # (cause, kind, runtime, device kind, numbers)
from support.regex_time import cpu_limit, cpu_now

_GIB = 1024 ** 3
_MIB = 1024 ** 2


def _elided(req, total, free, proc):
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} of "
            f"which {free} is free. ... this process has {proc} memory in use\n")


def test_elided_message_process_holds_the_card_tiny_request_is_weights():
    # 15.50 - 0.0195 (free) - 15.47 = 0.011 GiB left for others, under 4 % of the card; 24 MiB is 0.15 % of it (< 0.5 %)
    cause, kind, runtime, dev, nums = _read(_elided("24.00 MiB", "15.50 GiB", "20.00 MiB", "15.47 GiB"))
    assert (kind, runtime, dev) == ("torch.cuda", "pytorch", "cuda")
    assert nums["requested"] == 24 * _MIB and nums["this_process"] == round(15.47 * _GIB)
    assert cause == "weights-exceed-vram"


def test_full_process_sentence_cut_after_it_tiny_request_is_weights():
    # 2.x's own words, cut after the process sentence: 39.40 - 0.0117 - 39.35 = 0.04 GiB outside; 40 MiB is 0.1 % of the card
    cause, conf, _ = _top("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 MiB.\n"
                          "GPU 0 has a total capacity of 39.40 GiB of which 12.00 MiB is free.\n"
                          "Including non-PyTorch memory, this process has 39.35 GiB memory in use.\n")
    assert cause == "weights-exceed-vram"
    assert conf["weights-exceed-vram"] > conf.get("activations", 0)


def test_request_of_a_percent_of_the_card_is_not_read_as_the_model():
    # 400 MiB of 39.40 GiB is 0.99 %, over half a percent: a batch's tensor may be that size, the bare message row stands
    cause, _, _ = _top(_elided("400.00 MiB", "39.40 GiB", "300.00 MiB", "39.08 GiB"))
    assert cause != "weights-exceed-vram"


def test_process_well_under_the_card_is_not_read_as_the_model():
    # 23.60 - 0.0195 - 20.00 = 3.58 GiB held outside this process, 15 % of the card (over the 4 % sliver)
    cause, _, _ = _top(_elided("20.00 MiB", "23.60 GiB", "20.00 MiB", "20.00 GiB"))
    assert cause != "weights-exceed-vram"


def test_another_process_listed_is_not_read_as_the_model():
    cause, _, _ = _top("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity "
                       "of 23.60 GiB of which 16.00 MiB is free. Process 4242 has 12.00 GiB memory in use. Including "
                       "non-PyTorch memory, this process has 11.55 GiB memory in use.\n")
    assert cause != "weights-exceed-vram"


# --- an autoencoder moved whole to the device: a model's weights ------------------------------------------------------------
# A latent-diffusion trainer keeps its frozen autoencoder beside the diffusion network and moves it with the module's own .to()
# or .cuda(), as "model.to(device)" and "unet.to(device)" already read; a batch's tensors and a name that says nothing
# ("temp.to(device)") still do not.

def _moved(statement):
    return ("Traceback (most recent call last):\n"
            '  File "/home/u/proj/train_ldm_gan.py", line 88, in <module>\n'
            "    main()\n"
            '  File "/home/u/proj/train_ldm_gan.py", line 52, in main\n'
            f"    {statement}\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total capacity of 11.70 GiB "
            "of which 18.00 MiB is free. ... this process has 10.95 GiB memory in use.\n")


def test_autoencoder_moved_to_the_device_reads_as_weights():
    from gpu_garden.memory.triage import categories as C
    assert C.source_category("    autoencoder.to(device)") == "weights-exceed-vram"
    assert C.source_category("        self.autoencoder_kl.eval().cuda()") == "weights-exceed-vram"
    assert C.source_category("  autoencoder = autoencoder.half()") == "weights-exceed-vram"
    cause, kind, runtime, _, _ = _read(_moved("autoencoder.to(device)"))
    assert (kind, runtime, cause) == ("torch.cuda", "pytorch", "weights-exceed-vram")


def test_tensor_moves_and_unnamed_objects_are_not_the_weights():
    from gpu_garden.memory.triage import categories as C
    assert C.source_category("    images = images.to(device)") is None
    assert C.source_category("    temp.to(device)") is None
    cause, _, _ = _top(_moved("images = images.to(device)"))
    assert cause != "weights-exceed-vram"


def test_weights_source_form_is_linear_on_adversarial_lines():
    import time
    from gpu_garden.memory.triage import categories as C
    rx = dict(C._SRC)["weights-exceed-vram"]        # the regex this round widened
    mb = 1 << 20
    for text in ("autoencoder" * (mb // 11), "autoencoder" + "x" * mb + ".to(", "autoencoder." + "a." * (mb // 2) + "to(",
                 "autoencoder" + ".a()" * (mb // 4), " " * mb + "autoencoder.cuda"):
        t = cpu_now()
        rx.search(text)
        assert cpu_now() - t < cpu_limit(1.0)


# --- "Process has N memory in use" without a PID: this process's own figure -------------------------------------------------
# PyTorch names every other process by its PID ("Process 4242 has 12.00 GiB memory in use"); a quote that keeps the sentence
# without "Including non-PyTorch memory, this" (or a note's "Process had") gives the process's own figure.

def test_process_sentence_without_pid_is_this_process_a_sentence_a_line():
    _, kind, _, _, nums = _read("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.\n"
                                "GPU 0 has a total capacity of 23.60 GiB of which 1.10 GiB is free.\n"
                                "Process has 22.40 GiB memory in use.\n")
    assert kind == "torch.cuda"
    assert nums["this_process"] == round(22.4 * _GIB) and "other_processes" not in nums
    assert nums["free"] == round(1.1 * _GIB)


def test_process_had_on_one_line_and_a_pid_still_another_process():
    _, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 10.00 GiB of "
                             "which 30.00 MiB is free. Process had 9.90 GiB memory in use.\n")
    assert nums["this_process"] == round(9.9 * _GIB)
    _, _, _, _, nums = _read("CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 10.00 GiB of "
                             "which 30.00 MiB is free. Process 777 has 6.00 GiB memory in use. Including non-PyTorch memory, "
                             "this process has 3.90 GiB memory in use.\n")
    assert nums["other_processes"] == 6 * _GIB and nums["this_process"] == round(3.9 * _GIB)


def test_process_sentence_forms_are_linear():
    import time
    from gpu_garden.memory.triage import error_patterns as RX
    from gpu_garden.memory.triage import paste
    mb = 1 << 20
    for text in ("Process has " + "9" * mb, "Process has " * (mb // 12), "Process ha" + "s" * mb, "P" + "rocess " * (mb // 8),
                 "Process has 1." + "1" * mb + " memory"):
        t = cpu_now()
        RX.SELF.search(text)
        paste._TORCH_MORE.match(text.encode())
        assert cpu_now() - t < cpu_limit(1.0)
