"""Session 50's newcomer review, triage findings (fixB), with the expected values read from the log lines by hand.

B1. vLLM 0.6.5-0.7's profiling line ("the current vLLM instance can use total_gpu_memory (8.00GiB) x gpu_memory_utilization
    (0.70) = 5.60GiB") gives the share and the card's total; so does 0.6.4's "Memory profiling results: total_gpu_memory=...
    gpu_memory_utilization=0.90". The guide's computed share starts from the printed one and never says the log printed none.
S5. A guide's command block takes the values of the "From this log's numbers" list below it (guides.set_flags), so the
    command a user copies never contradicts the list (vllm-weights.md's static 0.95 beside a computed 0.75).
S4. Three successful ComfyUI prompts before the VAE sample's OOM give `leak` a share (rules.py: successes alone), which takes
    vae-decode under 70 %. The share stays (without it two leak-labelled corpus cases lose leak from their top two); the
    text now lists every cause that took a share of 5 % or more under an uncertain verdict, with its reason.
D.  `triage` on a binary file says it is not a text log and how much of it is binary (NUL, control, non-UTF-8 bytes), not
    only "No out-of-memory error found"."""
import json
import re
from pathlib import Path
from types import SimpleNamespace

from support.regex_time import assert_each_fast
from support.triage_event import last_event, read
from gpu_garden.memory.triage import engine
from gpu_garden.memory.triage.render import render_human
from gpu_garden.memory.triage import guides
from gpu_garden.memory.triage.fact_patterns import FACTS

GiB = 1 << 30
CORPUS = Path(__file__).parent / "corpus"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```\s*$", re.S | re.M)
FACT = {name: rx for name, rx in FACTS if name in ("vllm_util", "vllm_total")}


def _util(line):
    m = FACT["vllm_util"].search(line)
    return m and (m.group(1) or m.group(2) or m.group(3))


# every form of the share vLLM printed itself (the corpus's vLLM logs), and its advice that names the key with no figure
def test_vllm_share_forms():
    assert _util("worker.py:267] the current vLLM instance can use total_gpu_memory (8.00GiB) x gpu_memory_utilization "
                 "(0.70) = 5.60GiB") == "0.70"                                               # 0.6.5-0.7 profiling line
    assert _util("Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
                 "kv_cache_size=2.89GiB gpu_memory_utilization=0.90") == "0.90"                # 0.6.4 profiling line
    assert _util("non-default args: {'model': 'm', 'gpu_memory_utilization': 0.95, 'max_model_len': 8192}") == "0.95"
    assert _util("The current --gpu-memory-utilization=0.9 is equivalent to --gpu-memory-utilization=0.87 without CUDA "
                 "graph memory") == "0.9"                                                     # the share in use, not its equivalent
    assert _util("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                 "initializing the engine.") is None
    assert _util("Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend)") is None


def test_vllm_total_forms():
    assert FACT["vllm_total"].search("can use total_gpu_memory (8.00GiB) x gpu_memory_utilization (0.70)").group(1) == "8.00"
    assert FACT["vllm_total"].search("Memory profiling results: total_gpu_memory=23.58GiB initial").group(1) == "23.58"


def test_v0_profiling_line_gives_share_and_total():
    text = (CORPUS / "vllm_v0_negative_kv_rtx4060.log").read_text()
    res, ev = last_event(text)
    assert ev["numbers"]["gpu_memory_utilization_ratio"] == 0.70
    assert ev["numbers"]["total"] == 8 * GiB
    md = ev["guide"]["markdown"]
    assert "prints neither the share" not in md
    # from the log's 0.70 (not the default 0.92): (fix66c) 0.70 x 8 GiB less the cache's -1.05 GiB is 6.65 GiB held, no model
    # named for one request's cache, so 6.65 / 8 + 0.01 = 0.841 up to 0.85 (llm/util_from_log.py), not a flat 0.70 + 0.05
    assert "`--gpu-memory-utilization 0.85`" in md


def test_v064_profiling_line_gives_total():
    text = (CORPUS / "unseen/batch-01/vllm_v0_maxlen_29k_rtx3090.log").read_text()
    _, _, runtime, _, nums = read(text)
    assert runtime == "vllm"
    assert nums["total"] == round(23.58 * GiB) and nums["gpu_memory_utilization_ratio"] == 0.9


def test_fixb_patterns_linear():
    n = 1 << 20
    assert_each_fast([
        (FACT["vllm_util"].search, ["gpu_memory_utilization (" * (n // 24), "gpu_memory_utilization (" + "1" * n,
                                    "gpu_memory_utilization (0." + "1" * n + "x",
                                    "gpu_memory_utilization=" + "1" * n]),
        (FACT["vllm_total"].search, ["total_gpu_memory (" * (n // 18), "total_gpu_memory=" + "1" * n,
                                     "total_gpu_memory (1." + "1" * n + " Gi"]),
    ])


# S5 -----------------------------------------------------------------------------------------------------------------

def _blocks(md):
    return FENCE.findall(md.split("**From this log's numbers**")[0])


def test_vllm_weights_block_takes_the_logs_share():
    # B1's log: share 0.70 printed, so the list says 0.85 (fix66c: from the log's figures, test above) and the block must
    # too, not the guide's static 0.95
    _, ev = last_event((CORPUS / "vllm_v0_negative_kv_rtx4060.log").read_text())
    (block,) = _blocks(ev["guide"]["markdown"])
    assert "--gpu-memory-utilization 0.85 " in block and "0.95" not in block
    assert any("--gpu-memory-utilization 0.85" in c["text"] for c in ev["guide"]["commands"] if "From this" not in c["label"])


def test_vllm_weights_block_v017_non_default_args():
    # vLLM 0.17.1, 'gpu_memory_utilization': 0.6 in its non-default args and no cache blocks: 0.65 in the list and the block
    text = (CORPUS / "unseen/batch-617/vllm_0171_rtx3090_qwen25_7b_instruct_util_060_ctx_8192_weights_14_25gib_available_kv_"
            "minus_0_7gib_no_cache_blocks_util_065_fix.log").read_text()
    _, ev = last_event(text)
    assert "`--gpu-memory-utilization 0.65`" in ev["guide"]["markdown"]
    assert all("--gpu-memory-utilization 0.65 " in b for b in _blocks(ev["guide"]["markdown"]))


def test_set_flags_fills_blocks_and_keeps_prose():
    md = ("Raise `--max-model-len 8192` in prose.\n\n```bash\nvllm serve M --max-model-len 8192 --max-num-seqs 8\n```\n\n"
          "```bash\nvllm serve M --kv-cache-dtype fp8 --max-model-len=16384 --enforce-eager\n```\n\n"
          "```bash\nOLLAMA_CONTEXT_LENGTH=8192 OLLAMA_NUM_PARALLEL=4 ollama serve\n```\n\n```\nPARAMETER num_ctx 8192\n```\n")
    sugg = [{"kind": "flag", "name": "--max-model-len", "value": "4096", "text": "--max-model-len 4096", "reason": "r"},
            {"kind": "flag", "name": "--kv-cache-dtype", "value": "fp8", "text": "--kv-cache-dtype fp8", "reason": "r"},
            {"kind": "flag", "name": "--max-model-len", "value": "9984", "text": "--max-model-len 9984",
             "reason": "with --kv-cache-dtype fp8"},
            {"kind": "flag", "name": "--enforce-eager", "value": "", "text": "--enforce-eager", "reason": "r"},
            {"kind": "env", "name": "OLLAMA_CONTEXT_LENGTH", "value": "2048", "text": "OLLAMA_CONTEXT_LENGTH=2048", "reason": "r"},
            {"kind": "param", "name": "num_ctx", "value": "2048", "text": "PARAMETER num_ctx 2048", "reason": "r"}]
    out = guides.set_flags(md, sugg)
    assert out == ("Raise `--max-model-len 8192` in prose.\n\n```bash\nvllm serve M --max-model-len 4096 --max-num-seqs 8\n```\n\n"
                   "```bash\nvllm serve M --kv-cache-dtype fp8 --max-model-len=9984 --enforce-eager\n```\n\n"
                   "```bash\nOLLAMA_CONTEXT_LENGTH=2048 OLLAMA_NUM_PARALLEL=4 ollama serve\n```\n\n```\nPARAMETER num_ctx 2048\n```\n")


# S4 -----------------------------------------------------------------------------------------------------------------

SAMPLES = Path(engine.__file__).parent / "samples"
RUN_OK = "got prompt\nRequested to load SDXL\nloaded completely 9.5 GB 4.78 GB True\nPrompt executed in 6.12 seconds\n"


def test_uncertain_text_names_the_leak_share_of_earlier_runs():
    text = RUN_OK * 3 + (SAMPLES / "comfyui_vae_decode_oom.log").read_text()
    res = engine.triage_text(text)
    out = render_human(res)
    assert out.startswith("Cause: uncertain: vae-decode?"), out.splitlines()[0]
    assert "Other causes that scored (their points keep the first under 70 %):" in out
    leak = [ln for ln in out.splitlines() if ln.lstrip().startswith("leak ")]
    assert leak and "3 successful run(s) before this failure" in leak[0], out


def test_sure_text_unchanged_without_earlier_runs():
    out = render_human(engine.triage_text((SAMPLES / "comfyui_vae_decode_oom.log").read_text()))
    assert out.startswith("Cause: vae-decode (") and "Other causes that scored" not in out


# D ------------------------------------------------------------------------------------------------------------------

def _cli(path, capsys, as_json=False):
    rc = engine.run_cli(SimpleNamespace(file=str(path), json=as_json))
    return rc, capsys.readouterr().out


def test_binary_file_is_called_not_text(tmp_path, capsys):
    # 1,080 bytes of text lines, then 4,000 binary ones: NUL and 0x01 are control bytes, 0xFF and 0xFE are never UTF-8
    p = tmp_path / "model.bin"
    p.write_bytes(b"hello world, no error here\n" * 40 + b"\x00\x01\xff\xfe" * 1000)
    rc, out = _cli(p, capsys)
    assert rc == 1
    assert out.startswith("No out-of-memory error found, and this is not a text log: 4,000 of its 5,080 bytes (79%) are NUL, "
                          "control or non-UTF-8 bytes"), out
    rc, out = _cli(p, capsys, as_json=True)
    res = json.loads(out)
    assert res["not_text"] is True and res["bytes"] == 5080 and res["binary_bytes"] == 4000


def test_text_logs_without_a_failure_stay_text(tmp_path, capsys):
    # ANSI colours, UTF-8 Chinese, one Latin-1 byte (0xFC, "ü"): 1 binary byte in 96, under the 10 % share
    p = tmp_path / "ok.log"
    p.write_bytes("\x1b[32mINFO\x1b[0m 模型已加载 model loaded\n".encode() + b"Gr\xfcn\n" + b"step 1/10 done\r\n" * 3)
    rc, out = _cli(p, capsys)
    assert rc == 1 and out.startswith("No out-of-memory error found (") and "not a text log" not in out, out
    # UTF-16 (PowerShell's `>`): a NUL after every ASCII character, and still text
    p16 = tmp_path / "ps.log"
    p16.write_bytes("step 1/10 done\r\n".encode("utf-16") * 1)
    rc, out = _cli(p16, capsys)
    assert "not a text log" not in out, out
