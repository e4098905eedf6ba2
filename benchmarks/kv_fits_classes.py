"""Why kv's fits verdict and the runtime disagree (docs/kv-accuracy.md, Round 106, task fits55): each row of
bench_llm.json whose fits_agree is False, with the class a reader gave it, kv's headroom on it (kv_headroom.headroom,
Round 41's formula; each row planned and scored by bench_llm itself) and a split-half test of an "at the edge" verdict.

  (a) a term kv does not model (other processes' memory, a warm-up or capture after the pool, a runtime bug ...)
  (b) a term kv models wrongly (a line in memory/llm names it)
  (c) within a boundary kv cannot resolve from the inputs (kv's line within about 1.5 % of the budget)
  (d) the row's label or mapping is doubtful (a patched or nightly runtime, an outcome that is not a VRAM verdict)

The reasons, row by row, are in the round's table; CLASSES holds the letters. Rows are numbered 1.. in bench_llm.json's
order; the edge verdict was designed on the even rows and then run on the odd ones and on every row with a verdict:
where kv says "fits" with headroom below EDGE of the budget it says "at the edge, may not fit", which counts as agreeing
only where the runtime refused or ran out (the direction it names) and as disagreeing where the run started.
A disagreeing row not in CLASSES is listed as unclassified (a later batch), not guessed.

    .venv/bin/python benchmarks/kv_fits_classes.py
"""
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import bench_llm as B  # noqa: E402
from kv_headroom import collect, headroom  # noqa: E402
from results import save  # noqa: E402

EDGE = 0.01  # the edge verdict's band, a fraction of the runtime's budget (chosen on the even rows, before the odd)
CLASSES = {
    "vllm-kvlab-dsv2lite-awq-4080-u085": "a",
    "vllm-18107-qwen3-30b-a3b-gptq-5090-transformers-oom": "a",
    "llamacpp-7366-command-r-35b-q4km-5x3060-8k": "d",
    "llamacpp-snaps107-r1-distill-qwen7b-q4km-6g-4k": "a",
    "ollama-4799-deepseek-v2-16b-lite-q4ks-4070-2k": "d",
    "sglang-pr18263-qwen3-30b-a3b-2507-fp8-mi355x-tp1": "a",
    "sglang-4895-gemma3-27b-awq-24g-4k-refused": "d",
    "vllm-alexgs74-glm47-nvfp4-tp4-4xrtxpro6000-u090-oom": "b",
    "vllm-qevos-qwen36-27b-fp8-4090-48g-262144-fp8kv-refused": "a",
    "ollama-bric-qwen36-27b-3090-32k-partial": "a",
    "vllm-recipes831-qwen38-27b-fp8-rtxpro6000maxq-default-refused": "a",
    "sglang-35777-qwen38-27b-nvfp4-5090-mf090-refused": "a",
    "vllm-tanguille-qwen36-27b-awq-r9700-262k-mtp4-fp8-refused": "a",
    "vllm-tanguille-qwen36-27b-gptq-r9700-131k-f16kv-refused": "a",
    "llamacpp-rx7900xtx-qwen38-27b-iq3s-262k-q8kv-mtp2-vision-oom": "a",
    "sglang-mattbucci3090-qwen3vl-32b-awq-tp1-mf085-16k-16seq-refused": "a",
    "vllm-leodcfa-qwen36-27b-unsloth-nvfp4-5090-163k-mtp2-refused": "d",
    "vllm-leodcfa-qwen36-35b-a3b-nvidia-nvfp4-5090-131k-oom": "d",
    "llamacpp-sergeyp104-gptoss120b-q4km-10xp104-131k-np2-fit": "b",
    "llamacpp-sergeyp104-qwen38-27b-q80-6xp104-260k-fit": "b",
    "vllm-alpharomercoma-qwen38-27b-int4-4090-65k-fp8-mtp2-refused": "a",
    "llamacpp-klimtech-phi35-mini-q6kl-quadro-p1000-4k-q8kv-fit": "b",
    "ollama-accessflow-qwen3-4b-1650-3801free-4k-q8kv-fa-fit": "b",
    "vllm-jadeezomg-qwen35-9b-int4-arcb50-128k-u095-precheck-refused": "a",
    "vllm-buccaneer-qwen25-7b-3090-8k-u065-refused": "c",
    "vllm-32105-glm47-fp8-pp8-8xa100-202k-u0925-refused": "d",
    "vllm-17238-qwen25-32b-w8a16-tp2-2x3090-4k-u09-refused": "a",
    "vllm-buccaneer-llama31-8b-3090-8k-u090-sampler-oom": "a",
    "llamacpp-llmfit774-gemma3-12b-q4km-2080-4k-ngl44-partial": "c",
    "llamacpp-llmfit774-phi4-q4km-2080-4k-ngl32-partial": "c",
    "ollama-10217-mistral-small31-7900xtx-2k-partial": "c",
    "sglang-mattbucci-3090-glm45-air-reap-82b-awq-tp2-mf0985-2k-oom": "a",
    "llamacpp-club5060ti-qwen36-27b-iq4xs-5060ti-96k-q4kv-refused": "c",
    "llamacpp-club5060ti-qwen36-27b-q4km-5060ti-4k-q8kv-refused": "c",
    "vllm-imageworks-llava15-7b-awq-4080-4k-u085-freemem-refused": "a",
    "llamacpp-ghghang16-gemma4-26b-a4b-udiq4nl-t4-32k-np2-ngl999": "b",
    "llamacpp-alpy-qwen3-4b-q6k-1660ti-4k-ngl-minus1": "d",
    "ollama-maccare-gemma3-4b-q4km-m2-8g-4k-fit": "b",
    "vllm-lambo-qwen35-9b-bf16-tp4-24gb-32k-graphoom": "b",
    "vllm-lifenyan-qwen25-7b-gptq-int4-4090-32k-u095-seqs256-graph-oom": "a",
    "sglang-physharness-qwen38-27b-awq-4090d-32k-msf086-refused": "b",
    "vllm-vllmhybrid-llama33-70b-bf16-tp8-8xh100-16k-u025-seqs64-eager": "b",
    "llamacpp-10421-qwen25-3b-q41-a770-sycl-112k-np48-oom": "b",
    "vllm-steveseguin-minimax-m27-autoround-bf16u4-tp4-4xb70-2k-mbt2048-nokv": "d",
    "vllm-steveseguin-minimax-m27-autoround-bf16u4-tp4-4xb70-2k-ngram4-nokv": "d",
    "vllm-99sono-triattn-qwen3-0.6b-bf16-5090-262k-u085-eager-noprefix-mbt1024": "d",
    "c107-vllm-99sono-qwen36-35b-a3b-redhatnvfp4-5090-8k-u080-fp8kv-mns32-mbt8192-refused": "b",
    "mimi-qwen35-122b-a10b-q4km-4xp100-32k-ub1585-nofa-ot36-attn49": "c",
}


def edge_agrees(kv_fits: bool, ran: bool, share) -> bool:
    """The edge verdict's score on one row: inside the band (kv: fits, headroom share below EDGE) it names "may not
    fit", so it agrees only with a refusal; elsewhere kv's verdict stands and agrees when it equals the outcome."""
    if kv_fits and share is not None and share < EDGE:
        return not ran
    return kv_fits == ran


def main() -> int:
    data = json.loads(B.DATA.read_text())["rows"]
    by_id = {r["id"]: r for r in data}
    every = collect(data)  # bench_llm's own _plan and score of every row with a verdict, in the data's order
    found = {f["id"]: f for f in every}
    rows = [f for f in every if f["kv"] != f["ran"]]  # bench_llm.json's fits_agree False, numbered in its order
    out, halves = [], {"even": [0, 0, 0], "odd": [0, 0, 0]}  # rows, agree now, agree with the edge verdict
    for n, r in enumerate(rows, 1):
        f = found[r["id"]]
        _, res = B._plan(by_id[r["id"]])
        h = headroom(res, by_id[r["id"]]["input"].get("num_gpus") or 1)
        edge = edge_agrees(f["kv"], f["ran"], f["share"])
        half = halves["even" if n % 2 == 0 else "odd"]
        half[0], half[2] = half[0] + 1, half[2] + edge
        out.append({"n": n, "id": r["id"], "runtime": r["runtime"], "kv_fits": f["kv"], "ran": f["ran"],
                    "class": CLASSES.get(r["id"], "unclassified"),
                    "headroom_gib": None if h is None else round(h[0] / B.GiB, 2),
                    "headroom_pct": None if h is None else round(100 * h[1], 1), "edge_agrees": edge})
    counts = {c: sum(o["class"] == c for o in out) for c in ("a", "b", "c", "d", "unclassified")}
    flips = [f["id"] for f in every if edge_agrees(f["kv"], f["ran"], f["share"]) != (f["kv"] == f["ran"])]
    summary = {"rows": len(out), "kv_fits_runtime_failed": sum(o["kv_fits"] and not o["ran"] for o in out),
               "kv_no_runtime_ran": sum(o["ran"] and not o["kv_fits"] for o in out), "classes": counts,
               "edge_pct": 100 * EDGE,
               "even": {"rows": halves["even"][0], "agree_before": 0, "agree_edge": halves["even"][2]},
               "odd": {"rows": halves["odd"][0], "agree_before": 0, "agree_edge": halves["odd"][2]},
               "all": {"rows": len(every), "agree_before": sum(f["kv"] == f["ran"] for f in every),
                       "agree_edge": sum(edge_agrees(f["kv"], f["ran"], f["share"]) for f in every),
                       "started_to_disagree": sum(found[i]["ran"] for i in flips),
                       "refused_to_agree": sum(not found[i]["ran"] for i in flips)}}
    print(json.dumps(summary, indent=1))
    for o in out:
        print(f"{o['n']:>3} {o['class']:<3} {o['runtime']:<10} kv {'fits' if o['kv_fits'] else 'no':<4} "
              f"{'ran' if o['ran'] else 'failed':<6} {o['headroom_gib']!s:>8} GiB {o['headroom_pct']!s:>6} %  {o['id']}")
    save("kv_fits_classes", "python benchmarks/kv_fits_classes.py",
         {"summary": summary, "rows": out, "edge_flips": flips})
    return 0


if __name__ == "__main__":
    sys.exit(main())
