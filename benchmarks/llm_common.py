"""What every part of the LLM benchmark (bench_llm.py) shares: the pack loaded from this checkout, the memory/llm
modules the scoring calls, the data file and the drafters' folder."""
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DRAFTERS = REPO / "benchmarks" / "data" / "drafters"  # drafters' config.json, one folder a Hub repo name
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
from support.pack import load_pack  # noqa: E402

load_pack()

from gpu_garden.memory.errors import UserError  # noqa: E402,F401
from gpu_garden.memory.llm import kv as K  # noqa: E402,F401
from gpu_garden.memory.llm.runtimes import llamacpp as LC  # noqa: E402,F401
from gpu_garden.memory.llm.runtimes import ollama as OL  # noqa: E402,F401
from gpu_garden.memory.llm.runtimes import at_least, parse_version  # noqa: E402,F401

DATA = REPO / "benchmarks" / "data" / "llm_measured.json"
GiB, MiB = 1 << 30, 1 << 20
