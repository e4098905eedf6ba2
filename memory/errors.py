class UserError(Exception):
    """Bad input from the user (a file, a flag, a log): shown as one line, exit code 2, no traceback."""
