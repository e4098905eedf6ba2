"""`gpu-garden kv` against real runs: the numbers vLLM, llama.cpp and Ollama printed in public threads
(benchmarks/data/llm_measured.json, one thread URL per row).

Per row, what the runtime printed next to what memory/llm computes from the same inputs:
  weights      vLLM "Loading model weights took", Ollama memory.weights.total      (error %); llama.cpp the file, or
               the device + host model buffers where the row sums them (a tied token table is loaded twice);
               a GPU model buffer of layers the runtime placed itself (--fit, Ollama) at its printed layer count;
               an Ollama row whose weights_mib sums its llama runner's model buffers (before 0.30, a model its own
               engine does not run) as llama.cpp's: the host token table + the device buffers (a tied table twice)
  KV           llama.cpp "KV buffer size", Ollama memory.required.kv, vLLM's available KV memory
               ("exact" = within half a unit of the printed last digit; llama.cpp's memory breakdown
               truncates to whole MiB, so its context column C is exact for [C, C + 1)); a hybrid's recurrent
               state is in that column but not in llama.cpp's "KV buffer size" line (its "RS buffer" apart);
               Ollama's "kv cache" line holds its recurrent state checkpoints (the plan's state_checkpoints); a
               llama.cpp run without -c whose fit step lowered the context ("context size reduced from N to M", N the
               row's ctx) is scored at kv's own fit step (ctx not given), its fit verdict at N
  KV tokens    vLLM "GPU KV cache size" / GPU blocks x 16, from the GPU total (error %), and from the printed
               available memory (exact or not); SGLang max_total_num_tokens from the GPU total, and its "K size"
               for the printed token count (exact or not)
  concurrency  vLLM "Maximum concurrency for N tokens per request"
  fits         did the runtime start (vLLM) / put every layer on the GPU (Ollama, llama.cpp), against our verdict;
               a llama.cpp row whose input sets -ngl below the model's layers (repeating + output) is the user's
               placement, which llama.cpp keeps (its fitter stops at "n_gpu_layers already set by user"): fits is
               the plan at that -ngl against "started", and fits_whole the plan at -ngl all against "fit" (every
               layer on the GPU); a run placed with -ot / --n-cpu-moe, which the input cannot say, has no "started"
               verdict
  device       llama.cpp over several GPUs (--tensor-split): the layers and KV buffer of the device the log names
  required     Ollama's memory.required.full on one GPU (all layers, or the placed ones + what overflows)
  compute      llama.cpp's "compute buffer size" on one GPU (the row's compute_mib) against the plan's reserve (error %),
               at the printed layer count where the runtime placed the layers itself (as the GPU model buffer)

An SGLang row's "gpu" (the card the run names) is passed as --gpu-name: its platform decides how SGLang loads an AWQ
MoE checkpoint (runtimes/sglang.py awq_experts_dense).

Rows are split into SEEN (used while the formulas were tuned: a regression set) and FIRST_SIGHT (never tuned
on). `--first-sight` scores every row and writes benchmarks/results/llm_first_sight.json; that run is
committed with the data, before any formula changes. The normal run writes benchmarks/results/bench_llm.json
with the two sets' errors separately.

    .venv/bin/python benchmarks/bench_llm.py [--first-sight]

Parts: llm_common.py (the pack, the memory/llm modules, DATA), llm_seen.py with llm_seen_batches_1_32.py,
llm_seen_batches_33_71.py and llm_seen_batches_72_on.py (SEEN, each batch's round comment), llm_score.py (score() and
its predicates), llm_summary.py (summaries, the verdicts' line, a table cell); main() here prints the table, records a
first sight or writes bench_llm.json. The names below are re-exported for the tests and scripts that import this module.
"""
import argparse
import json
import re  # noqa: F401
import statistics  # noqa: F401
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from llm_common import (DATA, DRAFTERS, GiB, K, LC, MiB, OL, UserError, at_least, load_pack,  # noqa: E402,F401
                        parse_version)
from llm_seen import SEEN  # noqa: E402
from llm_score import (_at_printed_layers, available_reading, breakdown_columns, BREAKDOWN_CONTEXT, BREAKDOWN_SELF,  # noqa: E402,F401
                       BUFFER_SUM, buffer_sum, _capacity, CONTEXT_COLUMNS, FIT_ABORT_NGL, fit_aborted_on_ngl,
                       FIT_CTX_REDUCED, fit_lowered_ctx, free_reading, GPU_MEMORY_LINE, HALF, kv_exact, kv_holds_state,
                       KV_WITH_STATE, OLLAMA_RUNNER_KV, OLLAMA_RUNNER_KV_QUOTED, OVERRIDE_TENSOR, _plan, quotes_runner_kv,
                       score, TENSOR_OVERRIDE, tensor_override, total_line, user_partial_ngl, vram_reading, VRAM_READINGS)
from llm_summary import _cell, fits_line, summarize  # noqa: E402
from results import save  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--first-sight", action="store_true",
                    help="score one batch's rows before any tuning on them and record it in llm_first_sight.json")
    ap.add_argument("--batch", type=int, default=1, help="the batch --first-sight records (rows carry a 'batch' number)")
    a = ap.parse_args(argv)
    data = json.loads(DATA.read_text())
    scored = [score(r) for r in data["rows"]]
    cols = ("weights_gib", "weights_gpu_mib", "weights_err", "kv", "kv_exact", "kv_tokens", "kv_tokens_err", "sglang_tokens", "concurrency", "fits",
            "fits_whole", "projector_mib", "required_full_gib")
    print(f"{'row':<38}" + "".join(f"{c:>18}" for c in cols))
    for s in scored:
        if "error" in s:
            print(f"{s['id']:<38}  {s['error']}")
            continue
        print(f"{s['id']:<38}" + "".join(f"{_cell(s[c]) if c in s else '-':>18}" for c in cols))
    if a.first_sight:
        rows = [s for s, r in zip(scored, data["rows"]) if r.get("batch", 1) == a.batch]
        summary = {"all": summarize(rows)}
        print(json.dumps(summary, indent=1))
        print(fits_line(summary))
        ledger_path = REPO / "benchmarks" / "results" / "llm_first_sight.json"
        ledger = json.loads(ledger_path.read_text()) if ledger_path.exists() else {}
        batches = ledger.get("batches") or ({"1": {"summary": ledger["summary"], "rows": ledger["rows"]}} if "summary" in ledger else {})
        batches[str(a.batch)] = {"summary": summary, "rows": rows}
        save("llm_first_sight", "python benchmarks/bench_llm.py --first-sight --batch N",
             {"batches": batches, "data": "benchmarks/data/llm_measured.json",
              "rule": "each batch scored by the formulas of the commit that added it, before any tuning on it"})
        return 0
    seen = [s for s in scored if s["id"] in SEEN]
    first = [s for s in scored if s["id"] not in SEEN]
    summary = {"regression": summarize(seen), "first_sight": summarize(first), "all": summarize(scored)}
    print(json.dumps(summary, indent=1))
    print(fits_line(summary))
    flat = {}
    for part, d in summary.items():
        for k, v in d.items():
            if isinstance(v, dict):
                for k2, v2 in v.items():
                    flat[f"{part}_{k}_{k2}"] = v2
            else:
                flat[f"{part}_{k}"] = v
    for b in sorted({r.get("batch", 1) for r in data["rows"]}):  # each batch as the current rules score it
        now = summarize([sc for sc, r in zip(scored, data["rows"]) if r.get("batch", 1) == b])
        for k, v in now.items():
            for k2, v2 in (v.items() if isinstance(v, dict) else [(None, v)]):
                flat[f"now_batch{b}_{k}" + (f"_{k2}" if k2 else "")] = v2
    ledger_path = REPO / "benchmarks" / "results" / "llm_first_sight.json"
    if ledger_path.exists():  # each batch's score at first sight, as recorded before any tuning on it
        for b, entry in json.loads(ledger_path.read_text()).get("batches", {}).items():
            for k, v in entry["summary"]["all"].items():
                if isinstance(v, dict):
                    for k2, v2 in v.items():
                        flat[f"ledger_batch{b}_{k}_{k2}"] = v2
                else:
                    flat[f"ledger_batch{b}_{k}"] = v
    save("bench_llm", "python benchmarks/bench_llm.py", {"summary": summary, "figures": flat, "rows": scored,
                                                          "regression_rows": list(SEEN)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
