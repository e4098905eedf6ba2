"""The context lines of a log and the scanner's words, by module (this one re-exports them under their old names):
`runtime_markers` (RUNTIME_MARKERS, NAMED_RUNTIMES, RUNTIME_WORDS), `fact_patterns` (FRAME_RE, FACTS, FACT_KEYS, the
Ollama and vLLM fact patterns), `fact_gate` (the gate: gated(), facts(), _trie_pattern) and `scan_words` (ERROR_KEYS,
ERROR_WORDS, the anchors and covers the chunk scanner reads, WINDOW_KEYS, DECODE_RE). Error lines are recognised in `parse.py`."""
from .runtime_markers import (RUNTIME_MARKERS, NAMED_RUNTIMES, RUNTIME_WORDS)  # noqa: F401
from .fact_patterns import (FRAME_RE, _OLLAMA_SIZE, OLLAMA_GPU_SIZE, OLLAMA_AVAILABLE, OLLAMA_SERVER_SAYS, OLLAMA_PS, VLLM_WEIGHT_FLAGS, FACTS, FACT_KEYS, _FACTS_GATED)  # noqa: F401
from .scan_words import (ERROR_KEYS, ERROR_WORDS, _IDLE_COVER, TAIL_WORDS, ERROR_COVER, IDLE_SKIP, IDLE_ANCHORS, _WORD_COVER, RECOGNISE_WORDS, TAIL_ANCHORS, ANCHORS, TRACE_ANCHORS, OPEN_ANCHORS, _LOAD_FACTS, _COMMAND, LOAD_KEYS, HEAD_ANCHORS, WINDOW_KEYS, TRAINING_KEYS, WINDOW_KEYS_TRAINED, OPEN_ANCHORS_TRAINED, DECODE_RE, RUN_WENT_ON, RECOVERED_WARNINGS)  # noqa: F401
from .fact_gate import (_trie_pattern, _GATE_KEYS, _FACT_GATE, _KEY_FACTS, _INNER, _PARTNERS, _UNION, gated, _LINE_FACTS, LINE_FACTS_KEPT, facts)  # noqa: F401
