"""LLM memory calculator, the `kv` CLI: its JSON contract and exit codes, the text answer and the model list, no torch
import, sizes without a verdict when there is no VRAM figure, and this machine's first GPU when --vram is not given
(the calculator's numbers: test_llm.py; its inputs: test_llm_inputs.py)."""
import json

from gpu_garden.memory import cli
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm import spec as llm_spec
from gpu_garden.memory.units import GiB, KiB


def spec(name):
    return llm_spec.load_builtin(name)


# ---------------------------------------------------------------- CLI

def test_cli_json_contract_and_exit_codes(capsys):
    rc = cli.main(["kv", "--model", "Llama-3-8B", "--ctx", "8192", "--vram", "24", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    for key in ("weights", "kv_per_token", "kv_total", "overhead", "total", "fits", "max_ctx", "flags"):
        assert key in out
    assert out["kv_per_token"] == 128 * KiB and out["kv_total"] == 8192 * 128 * KiB and out["fits"] is True
    rc = cli.main(["kv", "--model", "Llama-3-70B", "--ctx", "8192", "--vram", "24", "--json"])
    assert rc == 1 and json.loads(capsys.readouterr().out)["fits"] is False
    rc = cli.main(["kv", "--model", "Nope-1B"])
    assert rc == 2 and "unknown model" in capsys.readouterr().err
    rc = cli.main(["kv", "--model", "Llama-3-8B", "--kv-dtype", "q3_x"])
    assert rc == 2


def test_cli_text_and_list(capsys):
    assert cli.main(["kv", "--model", "list"]) == 0
    assert "Llama-3-8B" in capsys.readouterr().out.split()
    assert cli.main(["kv", "--model", "Mistral-7B-v0.1", "--runtime", "llama.cpp", "--ctx", "32768",
                     "--weights-dtype", "Q4_K_M", "--vram", "8"]) in (0, 1)
    text = capsys.readouterr().out
    assert "KV cache" in text and "llama-server" in text and "compute buffer" in text


def test_cli_does_not_import_torch():
    from support.pack import run_python
    out = run_python("import sys, gpu_garden.memory.llm.kv; print('torch' in sys.modules, 'gguf' in sys.modules)", timeout=60)
    assert out.stdout.strip() == "False False", out.stderr


def test_no_vram_gives_sizes_without_verdict(capsys):
    rc = cli.main(["kv", "--model", "Gemma-2-9B", "--ctx", "8192", "--runtime", "ollama", "--vram", "0.1", "--json"])
    assert rc == 2  # 0.1 GiB is not a GPU
    capsys.readouterr()
    r = llm.plan(spec("Gemma-2-9B"), runtime="ollama", ctx=8192)
    assert r["fits"] is None and r["max_ctx"] is None and r["flags"]


def test_cli_without_vram_uses_this_machines_first_gpu(monkeypatch, capsys):
    from gpu_garden.memory.budget import probe
    fake = {"devices": [{"index": 0, "name": "CPU (host RAM)", "backend": "cpu", "total": 64 * GiB},
                        {"index": 0, "name": "NVIDIA GeForce RTX 4090", "backend": "cuda", "total": 24 * GiB}]}
    monkeypatch.setattr(probe, "snapshot", lambda *a, **k: fake)
    assert cli.main(["kv", "--model", "Llama-3-8B", "--ctx", "8192", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["vram"] == 24 * GiB and out["fits"] is True
    monkeypatch.setattr(probe, "snapshot", lambda *a, **k: {"devices": [fake["devices"][0]]})
    assert cli.main(["kv", "--model", "Llama-3-8B", "--ctx", "8192", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fits"] is None
