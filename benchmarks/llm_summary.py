"""bench_llm's summaries (the figures per set: regression, first sight, all), the verdicts' line and a table cell."""
import statistics


def summarize(rows) -> dict:
    def pct(key):
        v = [(abs(r[key]) * 100, r["id"]) for r in rows if key in r]
        return {"n": len(v), "median_pct": round(statistics.median(x for x, _ in v), 2) if v else None,
                "worst_pct": round(max(v)[0], 2) if v else None, "worst_row": max(v)[1] if v else None}
    kv = [r for r in rows if "kv_exact" in r]
    fits = [r for r in rows if "fits_agree" in r]
    whole = [r for r in rows if "fits_whole_agree" in r]
    tp = [r for r in rows if "tokens_from_printed_exact" in r]
    dl = [r for r in rows if "device_layers_exact" in r]
    return {"rows": len(rows), "errors": sum("error" in r for r in rows),
            "weights": pct("weights_err"), "kv_tokens": pct("kv_tokens_err"), "projector": pct("projector_err"),
            "output_tensor": pct("output_err"), "ollama_required_full": pct("required_full_err"),
            "sglang_tokens": pct("sglang_tokens_err"), "llamacpp_compute": pct("compute_err"),
            "kv_exact": f"{sum(r['kv_exact'] for r in kv)}/{len(kv)}",
            "tokens_from_printed_exact": f"{sum(r['tokens_from_printed_exact'] for r in tp)}/{len(tp)}",
            "device_layers_exact": f"{sum(r['device_layers_exact'] for r in dl)}/{len(dl)}",
            "fits_agree": f"{sum(r['fits_agree'] for r in fits)}/{len(fits)}",
            # llama.cpp rows at a user's partial -ngl: the whole model (-ngl all) against the row's "fit"
            "fits_whole_agree": f"{sum(r['fits_whole_agree'] for r in whole)}/{len(whole)}",
            # an Unsloth UD- name alone: the verdict depends on the file (a weights range), not in fits_agree
            "fits_depends": sum("fits_depends" in r for r in rows)}


def fits_line(summary) -> str:
    """The table's summary line for the verdicts: agreed/scored and the rows left out as depending on the file."""
    return "fits agree: " + "; ".join(f"{part} {d['fits_agree']} ({d['fits_depends']} depend on the file, not scored)"
                                      for part, d in summary.items())


def _cell(v):
    if isinstance(v, tuple):
        return " / ".join(str(x) for x in v[:2])
    if isinstance(v, float):
        return f"{v * 100:+.1f}%"
    return str(v)
