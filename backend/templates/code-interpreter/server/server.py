"""The code interpreter server of the code-interpreter-v1 template: E2B's
code-interpreter HTTP API on port 49999, as the official SDKs call it
(docs/code-interpreter.md). E2B's own server (e2b-dev/code-interpreter,
template/server) is the reference for its behaviour; this one drives the
kernels with jupyter_client directly and serves with tornado, both from
Debian."""

import asyncio
import json
import logging
import sys
import time

import tornado.web
from tornado.iostream import StreamClosedError

import envd
import outputs
from contexts import Context, ContextError, normalize_language

PORT = 49999
DEFAULT_CWD = "/home/user"
log = logging.getLogger("server")


class Contexts:
    """Every context by id, and the default one of each language."""

    def __init__(self):
        self.by_id = {}
        self.defaults = {}  # language -> context id
        self.making = {}  # language -> lock: one default context made at a time

    async def create(self, language, cwd):
        ctx = Context(language, cwd)
        await ctx.start()
        self.by_id[ctx.id] = ctx
        return ctx

    async def default(self, language):
        lock = self.making.setdefault(language, asyncio.Lock())
        async with lock:
            ctx = self.by_id.get(self.defaults.get(language))
            if not ctx:
                ctx = await self.create(language, DEFAULT_CWD)
                self.defaults[language] = ctx.id
            return ctx

    async def remove(self, ctx):
        del self.by_id[ctx.id]
        await ctx.close()


class Handler(tornado.web.RequestHandler):
    def initialize(self, contexts):
        self.contexts = contexts

    def set_default_headers(self):
        self.set_header("Access-Control-Allow-Origin", "*")
        self.set_header("Access-Control-Allow-Methods", "*")
        self.set_header("Access-Control-Allow-Headers", "*")

    def options(self, *args):
        self.set_status(204)

    def fail(self, status, message):
        """E2B's error answers: the message as plain text."""
        self.set_status(status)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish(message)

    def reply(self, value):
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(value))

    def body(self):
        """The request's JSON object, or None after a 400."""
        try:
            value = json.loads(self.request.body or b"{}")
        except ValueError as e:
            self.fail(400, f"The body is not JSON: {e}")
            return None
        if not isinstance(value, dict):
            self.fail(400, "The body must be a JSON object")
            return None
        return value

    def field(self, body, name, kind):
        """A field of kind or None (absent or null); False after a 400."""
        value = body.get(name)
        if value is None or isinstance(value, kind):
            return value
        self.fail(400, f"'{name}' must be a {'string' if kind is str else 'JSON object'}")
        return False

    def context(self, context_id):
        ctx = self.contexts.by_id.get(context_id)
        if not ctx:
            self.fail(404, f"Context {context_id} not found")
        return ctx


class Health(Handler):
    def get(self):
        self.reply("OK")


class Execute(Handler):
    async def post(self):
        body = self.body()
        if body is None:
            return
        code, context_id = self.field(body, "code", str), self.field(body, "context_id", str)
        language, envs = self.field(body, "language", str), self.field(body, "env_vars", dict)
        if False in (code, context_id, language, envs):
            return
        if code is None:
            return self.fail(400, "'code' is required")
        if context_id and language:
            return self.fail(400, "Only one of context_id or language can be provided")
        for k, v in (envs or {}).items():
            if not envd.NAME.match(k) or not isinstance(v, str):
                return self.fail(400, f"env_vars: '{k}' must be a variable name with a string value")
        # The envd access token of a secure sandbox (E2B: envd checks it
        # when the server asks GET /envs with it).
        if not envd.token_ok(self.request.headers.get("X-Access-Token")):
            return self.fail(401, "unauthorized access, please provide a valid access token")
        if context_id:
            ctx = self.context(context_id)
            if not ctx:
                return
        else:
            try:
                ctx = await self.contexts.default(normalize_language(language))
            except ContextError as e:
                return self.fail(e.status, str(e))
        self.set_header("Content-Type", "application/x-ndjson")
        self.gone = asyncio.get_running_loop().create_future()
        try:
            await ctx.execute(code, envs or {}, self.emit, self.gone)
        except Exception as e:  # the kernel's channels broke: the stream still ends well
            log.exception("context %s: the execution failed", ctx.id)
            await self.emit(outputs.error("ExecutionFailed", f"{type(e).__name__}: {e}", ""))
        if not self.gone.done():
            self.emit_nowait({"type": "end_of_execution"})
            self.finish()

    def on_connection_close(self):
        if hasattr(self, "gone") and not self.gone.done():
            self.gone.set_result(True)

    def emit_nowait(self, item):
        self.write(json.dumps(item) + "\n")

    async def emit(self, item):
        """Writes one line; False once the client is gone."""
        try:
            self.emit_nowait(item)
            await self.flush()
            return True
        except StreamClosedError:
            return False


class ContextList(Handler):
    async def post(self):
        body = self.body()
        if body is None:
            return
        language, cwd = self.field(body, "language", str), self.field(body, "cwd", str)
        if False in (language, cwd):
            return
        try:
            ctx = await self.contexts.create(normalize_language(language), cwd or DEFAULT_CWD)
        except ContextError as e:
            return self.fail(e.status, str(e))
        self.reply(ctx.info())

    def get(self):
        self.reply([ctx.info() for ctx in self.contexts.by_id.values()])


class ContextRestart(Handler):
    async def post(self, context_id):
        ctx = self.context(context_id)
        if ctx:
            await ctx.restart()
            self.reply(None)


class ContextOne(Handler):
    async def delete(self, context_id):
        ctx = self.context(context_id)
        if ctx:
            await self.contexts.remove(ctx)
            self.reply(None)


async def main():
    started = time.monotonic()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log.setLevel(logging.INFO)
    contexts = Contexts()
    # The default Python context is up before /health answers (E2B's too).
    await contexts.default("python")
    app = tornado.web.Application([
        (r"/health", Health, {"contexts": contexts}),
        (r"/execute", Execute, {"contexts": contexts}),
        (r"/contexts", ContextList, {"contexts": contexts}),
        (r"/contexts/([^/]+)/restart", ContextRestart, {"contexts": contexts}),
        (r"/contexts/([^/]+)", ContextOne, {"contexts": contexts}),
    ])
    app.listen(PORT, address="0.0.0.0", max_body_size=64 << 20)
    log.info("serving on port %d, %.2f s after start", PORT, time.monotonic() - started)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
