"""Benchmarks write what they print to benchmarks/results/<name>.json; scripts/readme_figures.py fills the
README's figures from those files, and tests/unit/test_readme_figures.py fails when the two disagree."""
import json
import platform
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def save(name: str, command: str, data: dict) -> Path:
    """Write one benchmark's figures. `command` is what a reader runs to print them again."""
    RESULTS.mkdir(exist_ok=True)
    payload = {"command": command, "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
               **data}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    return path
