"""OOM logs to a cause: `parse` recognises messages and numbers, `engine` scans, ranks causes and renders, `guides` holds the fixes."""
