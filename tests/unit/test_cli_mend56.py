"""mend56: the lines session 54's wrapping (cliA) left whole: triage's "Numbers:" line and the estimate's latent and peak
lines wrap through memory/term.py like the notes around them (continuation hanging by 2, a figure never apart from its
unit), and support.cli_run.unwrap gives each back whole. And the console script's usage errors, end to end."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli_run import estimate, unwrap
from gpu_garden.memory import term
from gpu_garden.memory.triage import engine

CORPUS = Path(__file__).resolve().parent / "corpus"
# a figure left at a line's end without its unit ("... 13.73" / "GiB, ...")
PARTED = re.compile(r"\d$")


def test_triage_numbers_line_wraps_with_a_hanging_indent(monkeypatch):
    # breaks if render_human appends the Numbers line whole again (it was 215 characters on this log)
    log = (CORPUS / "vllm_worker_fragmentation_kaito.log").read_text()
    monkeypatch.setattr(term, "width", lambda: 80)
    text = engine.render_human(engine.triage_text(log))
    lines = text.splitlines()
    i = next(n for n, x in enumerate(lines) if x.startswith("Numbers: "))
    assert lines[i:i + 3] == ["Numbers: requested 546.00 MiB, total 15.77 GiB, free 514.19 MiB, allocated by",
                              "  PyTorch 13.73 GiB, reserved by PyTorch 14.45 GiB, reserved but unallocated",
                              "  736.86 MiB, in private pools 46.00 MiB, this process 15.25 GiB"]
    whole = ("Numbers: requested 546.00 MiB, total 15.77 GiB, free 514.19 MiB, allocated by PyTorch 13.73 GiB, reserved by "
             "PyTorch 14.45 GiB, reserved but unallocated 736.86 MiB, in private pools 46.00 MiB, this process 15.25 GiB")
    assert whole in unwrap(text).splitlines()
    monkeypatch.setattr(term, "width", lambda: 60)
    lines = engine.render_human(engine.triage_text(log)).splitlines()
    i = next(n for n, x in enumerate(lines) if x.startswith("Numbers: "))
    block = [lines[i]] + [x for x in lines[i + 1:i + 6] if x.startswith("  ") and not term.keep(x)]
    assert len(block) == 4 and all(len(x) <= 60 and not PARTED.search(x) for x in block), block


def test_estimate_latent_and_peak_lines_wrap_with_a_hanging_indent(monkeypatch, capsys):
    # breaks if format_text appends the latent or the peak line whole again (at 60 columns they were 89 and 119)
    monkeypatch.setattr(term, "width", lambda: 60)
    rc, out, _ = estimate(capsys, "flux1", "--vram", "24", "--ram", "64")
    lines = out.splitlines()
    for start, n in (("latent [", 2), ("peak ", 3)):
        i = next(k for k, x in enumerate(lines) if x.startswith(start))
        block = lines[i:i + n]
        assert all(len(x) <= 60 and not PARTED.search(x) for x in block), block
        assert all(x.startswith("  ") and not x.startswith("   ") for x in block[1:]), block
        assert not lines[i + n].startswith("  "), lines[i:i + n + 1]  # the next line is not more of it
    flat = unwrap(out, 60).splitlines()
    peak = next(x for x in flat if x.startswith("peak "))
    assert peak.startswith("peak 23.38 GiB in sample (torch max_memory_allocated ~ 22.53 GiB, nvidia-smi ~ ") \
        and peak.endswith("); smallest common card: 24 GB"), peak
    assert "latent [1, 16, 128, 128]: 4096 image tokens + 256 joint text tokens, batch 1 in the model" in flat


# --- the console script end to end: pip's wrapper is sys.exit(main()) (pyproject [project.scripts]) ------------------
TESTS = Path(__file__).resolve().parents[1]
SCRIPT = (f"import sys; sys.path.insert(0, {str(TESTS)!r}); from support.pack import load_pack; load_pack(); "
          "from gpu_garden.memory.cli import main; sys.argv[0] = 'gpu-garden'; sys.exit(main())")


@pytest.mark.parametrize("argv, says", [
    ([], "gpu-garden: error: give a COMMAND: demo, budget, estimate, triage, kv, trace"),
    (["--bogus"], "gpu-garden: error: unrecognized arguments: --bogus"),
    (["demo", "--json=yes"], "gpu-garden demo: error: argument --json: ignored explicit argument 'yes'"),
    (["budget", "--watch", "0"], "gpu-garden budget: error: --watch needs a positive number of seconds"),
    (["estimate", "flux1", "--vram", "abc"], "gpu-garden estimate: error: argument --vram: not a number of GiB: 'abc'"),
    (["triage", "{tmp}"], "gpu-garden triage: error: {tmp} is a directory, not a log file"),
    (["kv", "--model", "Llama-3.1-8B", "--ctx", "-1"], "gpu-garden kv: error: --ctx must be 1..16777216, got -1"),
    (["trace", "--comfyui", "{tmp}", "--family", "flux1", "--width", "0", "--height", "64"],
     "gpu-garden trace: error: width, height, frames and batch must be positive"),
])
def test_console_script_usage_errors_exit_2_one_line_on_stderr_nothing_on_stdout(argv, says, tmp_path):
    # breaks for [] on the old main (the whole help on stdout, nothing on stderr, exit 2); the others held already
    argv = [a.format(tmp=tmp_path) for a in argv]
    res = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert (res.returncode, res.stdout) == (2, ""), (res.returncode, res.stdout[:200], res.stderr)
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith(says.format(tmp=tmp_path)), res.stderr
