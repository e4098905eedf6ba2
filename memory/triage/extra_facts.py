"""Facts registered by small modules, each with its pattern, prefilter words and handler in one place
(fact_patterns.py and facts.py read this list; wrapper_runs.py's is registered the same way by hand)."""
from . import alloc_caps, ollama_warnings

ROWS = [(ollama_warnings.FACT, ollama_warnings.FACT_WORDS, ollama_warnings.read),     # (aud68c #4, #5)
        (alloc_caps.FACT, alloc_caps.FACT_WORDS, alloc_caps.read)]                    # (aud68c #8)
