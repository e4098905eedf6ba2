"""fix67m: review rev67g's findings on the fix67f merge (issue 14). Logs under data/fix67m/ (README: each one's thread),
numbers exact, prose and paths rewritten. Every test goes through the whole scan (engine.triage_text, the CLI's path, or
Scan.feed_text where a fact is checked)."""
from pathlib import Path

import pytest

from gpu_garden.memory.triage import engine

DATA = Path(__file__).parent / "data" / "fix67m"
FIX67F = Path(__file__).parent / "data" / "fix67f"
FP8_TAIL = (FIX67F / "vllm_31273_fp8_load_oom_tail.log").read_text()
MODEL = "Qwen/Qwen2.5-72B-Instruct"


def _answer(name_or_text):
    text = (DATA / name_or_text).read_text() if name_or_text.endswith(".log") else name_or_text
    res = engine.triage_text(text)
    ev = res["events"][res["headline"]]
    return res, ev, " ".join(e for c in ev["causes"] for e in c["evidence"])


def _quants(text):
    from gpu_garden.memory.triage.scan import Scan
    s = Scan()
    s.feed_text(text)
    return s.facts["vllm_wflags"].get("quant"), s.facts.get("vllm_own_quant")


# F1. A `-q` line of a command spread over `\` lines read the 40 lines before it again, once for each of the two facts,
# and a `docker run` looked 4000 characters on for its image: 0.2 MB of `docker run -q x \` lines took 9 s (0.3 s before
# fix67f). The lines are read once: each line starts from what the line before it left (vllm_short_q.before, _fold), and
# the image is looked for 300 characters on. Counted, not timed: the characters handed to the entry-point search, and
# the lines read back.
def test_a_command_over_many_lines_is_read_once_per_line(monkeypatch):
    from gpu_garden.memory.triage import vllm_short_q
    handed, read_back = [], []

    class Counting:
        def __init__(self, rx):
            self.rx, self.pattern = rx, rx.pattern

        def search(self, s, pos=0, endpos=None):
            end = len(s) if endpos is None else min(endpos, len(s))
            handed.append(max(0, end - pos))
            return self.rx.search(s, pos, end)

    monkeypatch.setattr(vllm_short_q, "ENTRY", Counting(vllm_short_q.ENTRY))
    prev = getattr(vllm_short_q, "_prev_line", None)
    monkeypatch.setattr(vllm_short_q, "_prev_line", lambda *a: read_back.append(a) or prev(*a), raising=False)
    lines = "  docker run -q x \\\n" * 3000 + "  docker run -q x\n"
    text = lines + f"$ vllm serve {MODEL} \\\n    -q fp8 \\\n    --max-model-len 32768\n" + FP8_TAIL
    res, ev, said = _answer(text)
    assert res["cause"] == "other" and "should fit" in said, (res["cause"], said)     # the -q fp8 still read
    assert sum(handed) < 8 * len(text), (sum(handed), len(text))        # was 80 times the log: 40 lines, twice
    assert len(read_back) < 3 * text.count("\n"), (len(read_back), text.count("\n"))


# F2. vLLM's benchmarks and batch runner take the engine's flags (vllm/benchmarks/throughput.py and latency.py, and
# benchmarks/benchmark_*.py, call AsyncEngineArgs.add_cli_args; run_batch.py too): their -q is --quantization. fix67f's
# entry points left them out. data/fix67m/bench_throughput_q.log: vllm-project/vllm#31273's fp8 load tail under
# `vllm bench throughput ... -q fp8`: the 72.7 B weights at 1 byte should fit (cause "other"); unread, activations.
def test_q_in_a_vllm_benchmark_is_the_quantization():
    res, ev, said = _answer("bench_throughput_q.log")
    assert res["cause"] == "other" and "should fit" in said, (res["cause"], said)      # was activations, no verdict


@pytest.mark.parametrize("cmd", [f"$ vllm bench latency --model {MODEL} -q fp8\n",
                                 f"$ python benchmarks/benchmark_throughput.py --model {MODEL} -q fp8\n",
                                 f"$ vllm run-batch -i in.jsonl -o out.jsonl --model {MODEL} -q fp8\n"])
def test_the_other_benchmark_entry_points_read_q(cmd):
    assert _quants(cmd + FP8_TAIL) == ("fp8", "fp8"), cmd


# F3. A lone `&` sends the command before it to the background and starts the next: `vllm serve ... 2>&1 & pip install -q
# openai` made "openai" the run's method (modelled on vllm-project/vllm#4408's 1.50 GiB request, 147.75 MiB free of
# 79.15 GiB, under a bf16 serve; data/fix67m/serve_bg_pip_q_bf16.log): activations, where without the pip it is
# weights-exceed-vram. And a docker run counts as vLLM's by its image's name, not a mounted path holding "vllm".
def test_a_background_ampersand_ends_the_vllm_command():
    res, ev, said = _answer("serve_bg_pip_q_bf16.log")
    assert res["cause"] == "weights-exceed-vram", res["cause"]            # was activations ("openai" read as a method)
    assert "--quantization openai" not in " ".join(c["text"] for c in ev["guide"]["commands"])


@pytest.mark.parametrize("cmd,want", [
    ("$ docker run --gpus all -v /srv/vllm/cache:/root/.cache -q nvidia/cuda:12.4.0-base nvidia-smi\n", None),
    (f"$ vllm serve {MODEL} --port 8000 > serve.log 2>&1 & pip install -q openai\n", None),
    (f"$ vllm serve {MODEL} -q fp8 > serve.log 2>&1 &\n", "fp8"),                  # 2>&1 and the & after: the same command
    (f"$ docker run --gpus all -v /srv/vllm/cache:/root/.cache vllm/vllm-openai:v0.13.0 --model {MODEL} -q fp8\n", "fp8")])
def test_q_is_read_only_in_a_vllm_command(cmd, want):
    assert _quants(cmd + FP8_TAIL) == (want, want), cmd


# F4. A command over `\` lines was read back only inside the scanner's current block and not in the window read before a
# failure: past the log's first 512 KiB (lines skipped by the idle scan, read again from the window) the `-q fp8` lost its
# `vllm serve` line, and the run was taken as 16-bit. data/fix67m/cont_q_tail.log (vllm-project/vllm#31273's tail under
# #16128's multi-line command) after 6000 and 12000 filler lines (0.6 and 1.2 MB: the second crosses the 1 MiB chunk).
@pytest.mark.parametrize("n", [6000, 12000])
def test_a_continued_q_is_read_past_the_first_block(n):
    head, tail = (DATA / "cont_q_tail.log").read_text().split("\n", 1)
    filler = "INFO 12-18 10:00:00 [metrics.py:100] heartbeat ok, nothing to report here, padding padding padding.\n"
    res, ev, said = _answer(head + "\n" + filler * n + tail)
    assert res["cause"] == "other" and "should fit" in said, (res["cause"], said)      # was other/activations, no verdict


# F5. An offline LLM.generate OOM mid-run (data/fix67m/offline_generate_kv_line.log: batch-545's gpt-oss judge replica's
# numbers, fix67f's log, 900.00 MiB asked with 679.38 MiB free of 79.19 GiB, with the KV sizing line of
# vllm-project/vllm#57047, 268,560 tokens, that LLM prints at its start-up, then "Processed prompts: 37%" and the
# generate / _run_engine frames of vllm/entrypoints/llm.py): guide_phase.shown() read the KV line as start-up, and the
# runner-up activations took the start-up guide. The bar (fix67g) and, without it, the _run_engine frame say serving.
@pytest.mark.parametrize("bar", [True, False])
def test_an_offline_generate_oom_is_shown_as_serving(bar):
    text = (DATA / "offline_generate_kv_line.log").read_text()
    if not bar:
        text = "".join(ln for ln in text.splitlines(True) if "Processed prompts" not in ln)
    res, ev, said = _answer(text)
    alts = [(a["id"], a["guide"] and a["guide"]["id"]) for a in ev["alternatives"][:2]]
    assert alts == [("other-process", "vllm-other-process"), ("activations", "vllm-activations")], alts   # was vllm-weights


# F6. A WSL log (data/fix67m/wsl_winpath_driver.log: Comfy-Org/ComfyUI#13210's offload-stream "CUDA error: out of
# memory" under WSL2's kernel line, /mnt/c/ frames, one mention of a Windows path) tied its OS votes and printed cmd's
# `set` form beside bash's; WSL runs Linux: env.infer's wsl vote settles a tie that Linux is in as Linux.
def test_a_wsl_log_is_linux_not_a_tie():
    from gpu_garden.memory.triage import env as env_mod
    from gpu_garden.memory.triage.scan import Scan
    text = (DATA / "wsl_winpath_driver.log").read_text()
    s = Scan()
    s.feed_text(text)
    # (fix68a) the /mnt/c/ frame votes Linux now, so this log no longer ties (linux 2, windows 1); the tie WSL's kernel line
    # settles is test_triage_fix68a's (the frame moved off /mnt/c/)
    assert s.facts["os_votes"]["wsl"] and s.facts["os_votes"]["linux"] >= s.facts["os_votes"]["windows"]
    got = env_mod.infer(s, s.incidents[-1], {})
    assert (got["os"], got["os_tied"]) == ("linux", False), got                  # was windows, tied
    res, ev, said = _answer(text)
    assert ev["platform"]["os"] == "linux", ev["platform"]
    texts = [c["text"] for c in ev["guide"]["commands"]]
    assert "CUDA_LAUNCH_BLOCKING=1 python main.py" in texts and not any(t.startswith("set ") for t in texts), texts
