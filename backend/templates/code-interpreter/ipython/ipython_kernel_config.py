# IPython kernels of the code-interpreter-v1 template (the server runs them
# as root: this is root's profile), configured as E2B's template does.
c = get_config()  # noqa: F821

# Tracebacks as plain text, without terminal colours.
c.InteractiveShell.colors = "NoColor"
# Long lists and dicts shown whole.
c.PlainTextFormatter.max_seq_length = 0
