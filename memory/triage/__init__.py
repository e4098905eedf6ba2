"""OOM logs to a cause and a fix. The path of a log, one module per step:

- `scan`       streams the log in bounded memory and groups error lines into incidents; `parse` recognises
               the error lines and their numbers (PyTorch's own messages: `torch_readers`; its patterns: `error_patterns`, and `other_runtimes` (its patterns in `other_patterns`), with `xla_runtimes`, for
               runtimes beyond PyTorch, ComfyUI, vLLM, llama.cpp and Ollama), `lines` re-exports the context-line patterns
               (`fact_patterns`, gated by `fact_gate`), the runtime markers (`runtime_markers`) and the scanner's anchor words
               (`scan_words`), `facts` applies the context lines (device, allocator,
               phase, buffer sizes), `window` reads back the lines before a failure that the scan skipped.
- `env`        the failure's OS, backend, allocator and runtime.
- `case`       one failure's facts under common names (the numbers, phase, traceback, history).
- `rules`      WHERE A CAUSE IS DECIDED: the rules table, one row per rule (predicate -> cause, weight,
               evidence), grouped by cause; the predicates rows share are in `predicates` (the LLM servers' in
               `server_predicates`, the CUDA driver's and WDDM's in `driver_predicates`). `categories` maps node names, model classes and frames to causes.
- `rank`       runs the table and ranks the causes (confidence; "uncertain" under rank.UNCERTAIN, 70 %, with the top two).
- `advice`     the numbers a guide's commands need; `guides` picks and fills the markdown guide (`guides/*.md`).
- `render`     the human text; `engine` ties the steps together (`triage_text`, `triage_stream`, `run_cli`).
"""
