class UserError(Exception):
    """Bad input from the user (a file, a flag, a log): shown as one line, exit code 2, no traceback."""


class RuntimeRefusal(UserError):
    """Settings the runtime itself refuses to start with (llama.cpp's llama_init_from_model returns no context): shown
    as a UserError, exit code 1, kv's 'the runtime refuses what was asked' (llm/report.py KV_EXIT_STATUS)."""
    exit_code = 1
