"""fix8: review rev7's D5 and rev6's S4 on triage, with hand-written inputs and the expected values worked out by hand.

S4 (rev6). The tiny-card weights row hands a big request over to the activations' row with that row's own test
    (predicates.big_request, one share: shares.REQUEST_SHARE): moving the share moves both rows together.
S2 (rev6). nvidia-smi's compute-apps rows are kept only under their header: a log that polls nvidia-smi's
    noheader GPU query ("0, NVIDIA A100, 40000 MiB") between other lines no longer pushes the header out.
D5. XLA's elided "RESOURCE_EXHAUSTED ... N bytes" quoted inside its exception's repr or a string: the quote's closing
    `')` or `"` after the bytes still ends the line."""
import pytest

from support.triage_event import top


@pytest.mark.parametrize("line, req", [
    ("jaxlib.xla_extension.XlaRuntimeError('RESOURCE_EXHAUSTED: ... 26214400 bytes')\n", 26214400),   # 25 MiB
    ('raise XlaRuntimeError("RESOURCE_EXHAUSTED ... 53616328704 bytes.")\n', 53616328704),
])
def test_quoted_elided_xla_status_read(line, req):
    _, _, ev = top(line)
    assert ev["kind"] == "xla.oom" and ev["numbers"]["requested"] == req


def test_quoted_grpc_message_size_still_no_incident():
    from gpu_garden.memory.triage import engine
    assert not engine.triage_text("E0101 rpc failed: 'RESOURCE_EXHAUSTED: ... 26214400 bytes over the max message size'\n")["found"]


# --- rev6 S4. one share for the tiny card's hand-over and the activations' row ---------------------------------------------
# (tri73) 90 MiB free, under a parameter's share of the card (5 % of 2 GiB is 102.4 MiB): the card is full, so
# card_room.room_left does not take the weights row out and only the share under test moves the answer
TINY = ("RuntimeError: CUDA out of memory. Tried to allocate 1.40 GiB (GPU 0; 2.00 GiB total capacity; 100.00 MiB already "
        "allocated; 90.00 MiB free; 110.00 MiB reserved in total by PyTorch)\n")


@pytest.mark.parametrize("share, cause", [
    (0.5, "activations"),            # 1.40 of 2.00 GiB is 70 % >= 50 %, 100 MiB held is 4.9 % (< 10 %): handed over
    (0.65, "activations"),           # 70 % >= 65 %: still the activations' row
    (0.75, "weights-exceed-vram"),   # 70 % < 75 %: the activations' row is silent and the weights row keeps it
])
def test_tiny_card_hand_over_follows_the_one_share(monkeypatch, share, cause):
    from gpu_garden.memory.triage import predicates
    monkeypatch.setattr(predicates, "REQUEST_SHARE", share)
    assert top(TINY)[0] == cause


# --- rev6 S2. compute-apps rows read from their header ---------------------------------------------------------------------
def test_polled_gpu_rows_do_not_evict_the_compute_apps_header():
    from support.triage_event import SMI_APPS_HEADER, TORCH_OOM_2250
    # "this process has 22.50 GiB" = 23040 MiB; the table's one row holds 6144 MiB = 6.00 GiB, not this process: another
    # program's, >= 1.5 GiB. Then 20 polled GPU lines, each after a line of other output: 20 > the 16 lines kept
    polls = "".join(f"step {i} done\n0, NVIDIA A100-SXM4-40GB, 40000 MiB\n" for i in range(20))
    cause, _, ev = top(TORCH_OOM_2250 + SMI_APPS_HEADER + "5151, /opt/srv/bin/other-server, 6144 MiB\n" + polls)
    assert cause == "other-process"
    assert any("holding 6.00 GiB" in e for c in ev["causes"] for e in c["evidence"])
