"""fix8: review rev7's D5 and rev6's S4 on triage, with hand-written inputs and the expected values worked out by hand.

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
