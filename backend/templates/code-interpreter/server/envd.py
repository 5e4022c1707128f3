"""What envd would tell the server on E2B: the sandbox's environment
variables (E2B's server asks envd's GET /envs) and whether a request's
X-Access-Token is the sandbox's (envd checks it there).

The local backend writes both into the sandbox when it is created (or claimed
from the warm pool) at ENVD_FILE, readable by root only:
{"envVars": {...}, "accessTokenSha256": "<hex>"} (no hash: not secure). The
token itself never enters the sandbox.
"""

import hashlib
import hmac
import json
import re

ENVD_FILE = "/run/e2b/envd.json"

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def read():
    try:
        with open(ENVD_FILE, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def env_vars():
    envs = read().get("envVars")
    return {k: v for k, v in envs.items() if isinstance(v, str) and NAME.match(k)} if isinstance(envs, dict) else {}


def token_ok(given):
    """Whether a request may run code: always in a sandbox that is not
    secure, else only with the sandbox's envd access token."""
    want = read().get("accessTokenSha256")
    if not want:
        return True
    if not given:
        return False
    got = hashlib.sha256(given.encode("utf-8", "surrogateescape")).hexdigest()
    return hmac.compare_digest(got, want)


def _q(value):
    # A JSON string is a Python and an R string literal too.
    return json.dumps(value)


def _sh(value):
    return "'" + value.replace("'", "'\\''") + "'"


def set_code(language, envs):
    """Code that sets envs in a kernel of language ("" when it has none)."""
    lines = []
    for k, v in envs.items():
        if language == "python":
            lines.append(f"__import__('os').environ[{_q(k)}] = {_q(v)}")
        elif language == "r":
            lines.append(f"Sys.setenv({k} = {_q(v)})")
        elif language == "bash":
            lines.append(f"export {k}={_sh(v)}")
    return "\n".join(lines)


def unset_code(language, names):
    lines = []
    for k in names:
        if language == "python":
            lines.append(f"__import__('os').environ.pop({_q(k)}, None)")
        elif language == "r":
            lines.append(f"Sys.unsetenv({_q(k)})")
        elif language == "bash":
            lines.append(f"unset {k}")
    return "\n".join(lines)


def restore_code(language, names, globals_):
    """After an execution with its own env vars: each back to the sandbox's
    value, or unset when the sandbox has none (E2B's cleanup)."""
    back = {k: globals_[k] for k in names if k in globals_}
    gone = [k for k in names if k not in globals_]
    return "\n".join(c for c in (set_code(language, back), unset_code(language, gone)) if c)
