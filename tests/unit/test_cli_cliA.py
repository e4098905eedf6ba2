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


def _trace_result():
    # a trace result as tracer.trace_family returns it (the figures are made up; only their layout is checked)
    G, M = 1 << 30, 1 << 20
    return {"model": {"family": "flux1", "phase": "sample", "class": "Flux", "dtype": "bf16", "latent": "[1, 16, 128, 128]",
                      "note": "4096 image tokens + 512 text tokens in one joint attention over the whole sequence"},
            "peak": int(23.5 * G), "weights": int(22.17 * G), "activations_peak": int(1.33 * G), "inputs": 64 * M,
            "live_at_peak": {"weight cast": 216 * M}, "at": {"op": "aten::mm", "module": "double_blocks.18.img_mlp.0"},
            "attention": {"calls": 57, "kernel": "flash", "peak": {"flash": int(1.2 * G), "naive": int(3.1 * G)},
                          "largest_scores": int(1.9 * G)},
            "host_attention": {"function": "attention_pytorch", "kernel": "SDPA",
                               "why": "ComfyUI picks PyTorch's scaled_dot_product_attention on this host (no xformers)"},
            "allocator": {"allocated_peak": int(23.6 * G), "reserved_peak": int(24.1 * G), "segments": 41,
                          "forward_excess": 310 * M},
            "top": [{"bytes": 216 * M, "kind": "activation", "op": "aten::mm", "module": "double_blocks.18.img_mlp.0",
                     "shape": [1, 4096, 12288], "dtype": "bfloat16"}], "ops": 12345, "seconds": 41.2}


def test_trace_prose_rows_wrap_under_their_column(monkeypatch):
    # review: trace's text printed its sentence rows whole (the CUDA allocator row is 170 characters); they now wrap
    # under the value column (16), the figure rows and the live-tensor table stay as they were
    from gpu_garden.memory.trace.tracer import format_result
    monkeypatch.setattr(term, "width", lambda: 80)
    lines = format_result(_trace_result()).splitlines()
    i = next(n for n, x in enumerate(lines) if x.startswith("CUDA allocator  "))
    assert lines[i:i + 3] == ["CUDA allocator  max_memory_allocated ~ 23.60 GiB,",
                              "                max_memory_reserved ~ 24.10 GiB (41 segments); the forward's own",
                              "                cache beyond the weights' packing 310.00 MiB"]
    i = lines.index("attention       57 calls, traced with flash; peak by kernel: flash 1.20 GiB,")
    assert lines[i + 1] == "                naive 3.10 GiB; largest n^2 scores 1.90 GiB"
    assert lines[:2] == ["flux1 sample: Flux (bf16), latent [1, 16, 128, 128], 4096 image tokens + 512",
                         "  text tokens in one joint attention over the whole sequence"]
    assert "peak            23.50 GiB" in lines and "traced 12345 ops in 41.2 s" in lines
    assert [x for x in lines if len(x) > 80 and not term.keep(x)] == []
