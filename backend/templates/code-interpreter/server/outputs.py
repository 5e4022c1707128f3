"""Jupyter messages -> the lines of E2B's /execute stream.

The shapes are E2B's (e2b-dev/code-interpreter, template/server/api/models):
stdout and stderr with their text and timestamp, a result with the MIME
bundle spread over named fields, an error with name, value and traceback.
"""

# MIME type -> the result's field, as E2B's Result names them.
MIME_FIELDS = {
    "text/plain": "text",
    "text/html": "html",
    "text/markdown": "markdown",
    "image/svg+xml": "svg",
    "image/png": "png",
    "image/jpeg": "jpeg",
    "application/pdf": "pdf",
    "text/latex": "latex",
    "application/json": "json",
    "application/javascript": "javascript",
    "e2b/data": "data",
    "e2b/chart": "chart",
}


def result(bundle, is_main_result):
    """A display_data or execute_result bundle as E2B's result line: the
    known types in their fields, every other one in `extra`."""
    out = {"type": "result"}
    extra = {}
    for mime, value in bundle.items():
        field = MIME_FIELDS.get(mime)
        if field:
            out[field] = value
        else:
            extra[mime] = value
    text = out.get("text")
    # E2B drops the quotes of a string's repr ('a' is shown as a).
    if isinstance(text, str) and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        out["text"] = text[1:-1]
    out["extra"] = extra
    out["is_main_result"] = is_main_result
    return out


def stream(name, text, timestamp):
    return {"type": name, "text": text, "timestamp": timestamp}


def error(name, value, traceback):
    return {"type": "error", "name": name, "value": value, "traceback": traceback}


def traceback_text(content):
    """The traceback's lines as one text, as Jupyter's frontends show it."""
    return "\n".join(content.get("traceback", []))


def from_iopub(msg):
    """The line for one IOPub message of an execution, or None."""
    kind = msg["msg_type"]
    content = msg["content"]
    if kind == "stream" and content.get("name") in ("stdout", "stderr"):
        date = msg["header"].get("date")
        stamp = date.isoformat() if hasattr(date, "isoformat") else date
        return stream(content["name"], content.get("text", ""), stamp)
    if kind == "display_data":
        return result(content.get("data", {}), False)
    if kind == "execute_result":
        return result(content.get("data", {}), True)
    if kind == "error":
        return error(content.get("ename", ""), content.get("evalue", ""), traceback_text(content))
    if kind == "execute_input":
        return {"type": "number_of_executions", "execution_count": content.get("execution_count")}
    return None
