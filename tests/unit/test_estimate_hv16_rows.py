"""hv16: the README names HunyuanVideo 1.5's two sampling rows by their index in bench_estimate.json's rows (rows.29 /
rows.30 since hv17 made them regression rows, at the end of FIT; rows.76 / rows.77 when they were held-out); a row
added before them would make those figures another case's. Breaking it: a traced case inserted before the
hunyuan-video-15 rows in benchmarks/estimate_traced.py, the benchmark rerun (the indices move)."""
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_readme_row_figures_are_the_cases_the_text_names():
    rows = json.loads((REPO / "benchmarks" / "results" / "bench_estimate.json").read_text())["rows"]
    text = (REPO / "README.md").read_text()
    named = {"848x480, 25 frames": "hunyuan-video-15 848x480x25 sample",  # hv17: FIT (regression) rows
             "1280x720, 121 frames": "hunyuan-video-15 1280x720x121 sample"}
    for words, case in named.items():
        m = re.search(r"<!--fig bench_estimate rows\.(\d+)\.err_ours [^>]*-->[^<]*<!--/fig--> at " + re.escape(words), text)
        assert m, words
        assert rows[int(m.group(1))]["case"] == case and rows[int(m.group(1))]["set"] == "fit"
