"""The figures of docs/kv-accuracy.md's round 105 (Qwen3.5's compute buffer without flash attention, task ellm83) and of
its review rev19 (task fix22), each from where it comes:

  printed  what llama.cpp printed per card ('CUDAn compute buffer size = X MiB', 'allocating X MiB on device n'), read
           from the notes of the round's rows in benchmarks/data/llm_measured.json
  after    kv now: bench_llm's _plan of the same row, each card's compute buffer (one GPU: the plan's)
  before   kv before the round: the same rows planned by the tree of commit BEFORE (6632c508, the round's baseline;
           the term and the -ub cap came after it, in 32991572 and 1bb39e09), taken out of git into a temporary folder
           and run in a child interpreter (this file with --tree)
  term     the f32 values a token beside the scores (llamacpp_noflash.no_flash_token_values; mainline=False: the old term,
           which the code keeps for Ollama's own engine and ik_llama.cpp), on the Hugging Face configs and on GGUFs
           written by benchmarks/llamacpp_reserve/mk_gguf.py (needs the gguf package)
  trace    the allocator's trace, benchmarks/llamacpp_reserve/trace.log: reserve.cpp's output (built against
           llama.cpp 69d8e4be with GGML_ALLOCATOR_DEBUG) on mk_gguf.py's files, read by trace_peaks()

A figure the doc states as a difference (kv over or under a printed card) is computed here from the two; the results go
to benchmarks/results/kv_round105.json, which scripts/readme_figures.py reads.

    .venv/bin/python benchmarks/kv_round105.py
"""
import json
import re
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from results import save  # noqa: E402

MiB = 1 << 20
BEFORE = "6632c508"
DATA = REPO / "benchmarks" / "data" / "llm_measured.json"
RESERVE = REPO / "benchmarks" / "llamacpp_reserve"
P100 = "mimi-qwen35-122b-a10b-q4km-4xp100-"
OLD_P100 = "llamacpp-miminashi-qwen35-122b-a10b-q4km-4xp100-"
# the round's table, in its order, then the two flash-attention siblings the -ub cap moved
ROWS = {"t4_9b": "llamacpp-ghghang16-qwen35-9b-q8-t4-64k-f16kv-noFA-mmproj-fit",
        "p100_16k": P100 + "16k-ub1586-nofa-ot36",
        "oom_32k": OLD_P100 + "32k-ub1586-nofa-ot36-oom",
        "oom_8k": OLD_P100 + "8k-ub8192-nofa-ot36-oom",
        "ctx4k_ub8192": OLD_P100 + "4k-ub4096-nofa-ot36",
        "attn_cpu_32k": P100 + "32k-ub1585-nofa-ot36-attn49",
        "attn_cpu_131k_oom": P100 + "131k-ub1586-nofa-ot36-attn49-oom",
        "fa_4k": P100 + "4k-ub4096-ot36",
        "fa_1k": P100 + "1k-ub8192-ot36"}
# the cards the doc says land on kv's term: not CUDA0 of a multi-card row (its own addition), not CUDA2 (one block less)
LANDS = {"t4_9b": ("0",), "p100_16k": ("1", "3"), "oom_32k": ("1",), "oom_8k": ("1",)}
PRINTED = re.compile(r"'CUDA(\d) compute buffer size = ([\d.]+) MiB'")
ASKED = re.compile(r"allocating ([\d.]+) MiB on device (\d): cudaMalloc failed")


def printed(row) -> dict:
    """{card: MiB} of every compute buffer the row's notes quote; a row that printed none (the reserve ran out of
    memory): what the failed allocation asked. (The T4 row's failed allocation is its projector's, after the text
    model's compute buffer.)"""
    notes = " ".join(row.get("notes", ()))
    out = {card: float(mib) for card, mib in PRINTED.findall(notes)}
    return out or {card: float(mib) for mib, card in ASKED.findall(notes)}


RUN = re.compile(r"^\$ \./reserve (\S+)\.gguf (\d+) (\d+)$")
TENSOR = re.compile(r"(\S+) \[\d+: ([0-9a-f]+)-([0-9a-f]+)\]")
COMPUTE = re.compile(r"CPU compute buffer size is ([\d.]+) MiB")


def trace_peaks(text: str) -> dict:
    """Per run of trace.log ('q9b_65536_512': file, n_ctx, n_ubatch): the tensors at the peak {name: MiB} from their
    offsets, the holes between them of 1 MiB or more (freed blocks the best fit did not reuse), the CPU compute buffer
    (MiB, as the four-place line prints it) and that less inp_embd's output (on a GPU run the token table is in host
    memory, so its output is too: the figure a CUDA card prints)."""
    runs, cur = {}, None
    for line in text.splitlines():
        if m := RUN.match(line):
            cur = runs.setdefault(f"{m[1]}_{m[2]}_{m[3]}", {})
        elif line.startswith("max_size"):  # the last one of a run: the peak
            spans = sorted(((name, int(a, 16), int(b, 16)) for name, a, b in TENSOR.findall(line.split("tensors:")[1])),
                           key=lambda t: t[1])
            cur["tensors_mib"] = {name: (b - a) / MiB for name, a, b in spans}
            cur["holes_mib"] = [(n[1] - p[2]) / MiB for p, n in zip(spans, spans[1:]) if n[1] - p[2] >= MiB]
        elif m := COMPUTE.search(line):
            cur["compute_mib"] = float(m[1])
            cur["less_inp_embd_mib"] = cur["compute_mib"] - cur["tensors_mib"]["inp_embd"]
    return runs


def plans(bench, rows: dict, batch63: list) -> dict:
    """Per row: each card's compute buffer (bytes) and the fullest card's total less the budget; batch 63's llama.cpp
    compute median (%), as `bench` (bench_llm of one tree) scores it."""
    out = {}
    for name, row in rows.items():
        _, res = bench._plan(row)
        devs = res.get("devices") or ()
        out[name] = {"compute": [d["compute_buffer"] for d in devs] or [res["overhead"]["compute_buffer"]],
                     "over_card": (max(d["total"] for d in devs) if devs else res["total"]) - res["budget"]}
    median = bench.summarize([bench.score(r) for r in batch63])["llamacpp_compute"]["median_pct"]
    return {"rows": out, "batch63_compute_median_pct": median}


def tree_bench(tree: Path):
    sys.path.insert(0, str(tree / "benchmarks"))
    import bench_llm
    return bench_llm


NEWER_SETTINGS = ("batch",)  # row inputs the code at BEFORE does not know


def before(rows: dict, batch63: list) -> dict:
    """plans() by the tree of commit BEFORE, on today's rows (so that only the code differs)."""
    # settings added since BEFORE are dropped: BEFORE took -b >= -ub, which every row that passes -b meets (kv48)
    rows = {n: dict(r, input={k: v for k, v in r["input"].items() if k not in NEWER_SETTINGS}) for n, r in rows.items()}
    batch63 = [dict(r, input={k: v for k, v in r["input"].items() if k not in NEWER_SETTINGS}) for r in batch63]
    with tempfile.TemporaryDirectory(prefix="kv_round105_") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", BEFORE, "__init__.py", "memory", "benchmarks",
                                  "tests/support"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        run = subprocess.run([sys.executable, __file__, "--tree", tmp], capture_output=True, text=True, check=True,
                             input=json.dumps({"rows": rows, "batch63": batch63}))
    return json.loads(run.stdout.splitlines()[-1])


def terms(gguf_dir: Path) -> dict:
    from gpu_garden.memory.llm import kv as K
    from gpu_garden.memory.llm.runtimes.llamacpp import compute_buffer
    from gpu_garden.memory.llm.runtimes.llamacpp_noflash import no_flash_token_values as values
    out = {}
    for name, model in (("qwen35_9b", "Qwen/Qwen3.5-9B"), ("qwen35_122b", "Qwen/Qwen3.5-122B-A10B"),
                        ("qwen3next", "Qwen/Qwen3-Next-80B-A3B")):
        spec = K.describe(model=model)
        out[name] = {"values": values(spec), "old": values(spec, mainline=False)}
    # Qwen3-Next by analogy (not kv's: it keeps the old term): the gated-attention live set with three n_embd blocks
    # (a MoE) and one position a token, not M-RoPE's four
    nx = K.describe(model="Qwen/Qwen3-Next-80B-A3B")
    q = nx.n_heads * nx.head_dim_k
    analogy = 3 * nx.hidden + 3 * q + 2 * nx.n_kv_heads * nx.head_dim_v + 2 + 1 + 1
    out["qwen3next"].update(analogy=analogy, analogy_over_mib=4 * 512 * (analogy - out["qwen3next"]["values"]) / MiB)
    # rev19 B1: GGUFs of the two shapes (4 layers, sparse), read by their general.architecture
    argv = sys.argv
    try:
        for kind in ("9b", "122b"):
            sys.argv = ["mk_gguf.py", kind, str(gguf_dir / f"{kind}.gguf"), "4"]
            runpy.run_path(str(RESERVE / "mk_gguf.py"), run_name="__main__")
    finally:
        sys.argv = argv
    g9, g122 = (K.describe(gguf=str(gguf_dir / f"{k}.gguf")) for k in ("9b", "122b"))
    out["gguf"] = {"arch_9b": g9.arch, "arch_122b": g122.arch, "values_9b": values(g9), "values_122b": values(g122),
                   "mib_9b_65536_512": compute_buffer(g9, 65_536, 512, False) / MiB,
                   "mib_9b_1024_512": compute_buffer(g9, 1024, 512, False) / MiB}
    return out


def figures(rows: dict, now: dict, old: dict) -> dict:
    def ub(name):
        return rows[name]["input"]["ubatch"]
    p = {name: printed(row) for name, row in rows.items()}
    a = {name: r["compute"] for name, r in now["rows"].items()}
    b = {name: r["compute"] for name, r in old["rows"].items()}
    return {
        # round 104's gap: the P100 16k card CUDA1 printed over kv's old term, f32 values a token
        "round104_gap_values": round((p["p100_16k"]["1"] * MiB - b["p100_16k"][1]) / (4 * ub("p100_16k"))),
        "land_max_mib": max(abs(a[n][int(c)] / MiB - p[n][c]) for n, cards in LANDS.items() for c in cards),
        "cuda2_less_16k_mib": p["p100_16k"]["1"] - p["p100_16k"]["2"],
        "cuda2_less_4k_mib": p["ctx4k_ub8192"]["1"] - p["ctx4k_ub8192"]["2"],
        "output_card_4k_over_mib": p["ctx4k_ub8192"]["3"] - a["ctx4k_ub8192"][3] / MiB,
        "attn_cpu_kv_over_mib": a["attn_cpu_32k"][1] / MiB - p["attn_cpu_32k"]["1"],
        "attn_cpu_kv_over_values": round((a["attn_cpu_32k"][1] - p["attn_cpu_32k"]["1"] * MiB) / (4 * ub("attn_cpu_32k"))),
        "attn_cpu_kv_under_before_mib": p["attn_cpu_32k"]["1"] - b["attn_cpu_32k"][1] / MiB,
        "cuda0_over_16k_mib": p["p100_16k"]["0"] - a["p100_16k"][1] / MiB,
        "cuda0_over_4k_mib": p["ctx4k_ub8192"]["0"] - a["ctx4k_ub8192"][1] / MiB,
        "cuda0_over_attn_cpu_32k_mib": p["attn_cpu_32k"]["0"] - a["attn_cpu_32k"][0] / MiB,
        "cuda0_over_attn_cpu_131k_mib": p["attn_cpu_131k_oom"]["0"] - a["attn_cpu_131k_oom"][0] / MiB,
        "attn_cpu_over_card_mib": now["rows"]["attn_cpu_32k"]["over_card"] / MiB,
        "attn_cpu_over_card_before_mib": old["rows"]["attn_cpu_32k"]["over_card"] / MiB,
        "batch63_compute_median_before_pct": old["batch63_compute_median_pct"],
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--tree"]:  # the child: plans() by another tree's bench_llm, rows on stdin
        given = json.loads(sys.stdin.read())
        print(json.dumps(plans(tree_bench(Path(argv[1])), given["rows"], given["batch63"])))
        return 0
    bench = tree_bench(REPO)
    data = json.loads(DATA.read_text())["rows"]
    by_id = {r["id"]: r for r in data}
    rows = {name: by_id[rid] for name, rid in ROWS.items()}
    batch63 = [r for r in data if r.get("batch", 1) == 63]
    now, old = plans(bench, rows, batch63), before(rows, batch63)
    with tempfile.TemporaryDirectory(prefix="kv_round105_gguf_") as tmp:
        term = terms(Path(tmp))
    out_rows = {name: {"id": row["id"], "ubatch": row["input"]["ubatch"], "printed": printed(row),
                       "before_mib": [c / MiB for c in old["rows"][name]["compute"]],
                       "after_mib": [c / MiB for c in now["rows"][name]["compute"]]}
                for name, row in rows.items()}
    trace = trace_peaks((RESERVE / "trace.log").read_text())
    # the rows whose -ub is above their context (llama.cpp caps it: 1bb39e09)
    above = [r["id"] for r in data if (r["input"].get("ubatch") or 0) > (r["input"].get("ctx") or 1 << 30)]
    result = {"before_commit": BEFORE, "data": "benchmarks/data/llm_measured.json", "rows": out_rows, "term": term,
              "trace": trace, "figures": figures(rows, now, old), "ubatch_above_ctx": above}
    for name, r in out_rows.items():
        print(f"{name:<18} printed {r['printed']}  before {[round(x, 2) for x in r['before_mib']]}  "
              f"after {[round(x, 2) for x in r['after_mib']]}")
    for name, t in trace.items():
        print(f"trace {name:<16} {t['compute_mib']:.4f} MiB, less inp_embd {t['less_inp_embd_mib']:.4f}; holes "
              f"{[round(h, 2) for h in t['holes_mib']]}; " + ", ".join(f"{k} {v:.2f}" for k, v in t["tensors_mib"].items()))
    print(json.dumps({"term": term, "figures": result["figures"]}, indent=1))
    save("kv_round105", "python benchmarks/kv_round105.py", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
