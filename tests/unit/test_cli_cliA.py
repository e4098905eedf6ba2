"""cliA: triage's 'also:' evidence lines (and trace's prose) at the terminal's full width, hanging under their text."""
from pathlib import Path

from gpu_garden.memory import term
from gpu_garden.memory.triage import engine

CORPUS = Path(__file__).resolve().parent / "corpus"


def test_also_lines_use_the_full_width_with_a_hanging_indent(monkeypatch):
    # review: at 60 columns the 'also:' lines hung at column 30 (under the evidence column) and wrapped into a
    # 30-column block, 4 lines for a 2-line sentence; now under the row at column 4, continuation under their text
    monkeypatch.setattr(term, "width", lambda: 60)
    text = engine.render_human(engine.triage_text((CORPUS / "comfyui_async_vaedecode_2gb.log").read_text()))
    lines = text.splitlines()
    i = lines.index("    also: one request of 256.00 MiB (12% of the card) inside")
    assert lines[i + 1:i + 3] == ["          the VAE: the decode's own tensor at this", "          resolution"]
    i = lines.index("    also: traceback source line: return")
    assert lines[i + 1] == '          (vae.decode(samples["samples"]), )'
    # at 80 columns (a pipe) one line each where it fits
    monkeypatch.setattr(term, "width", lambda: 80)
    lines = engine.render_human(engine.triage_text((CORPUS / "comfyui_async_vaedecode_2gb.log").read_text())).splitlines()
    assert '    also: traceback source line: return (vae.decode(samples["samples"]), )' in lines
