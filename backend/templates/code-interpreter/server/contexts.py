"""Code contexts: one Jupyter kernel each, driven with jupyter_client.

A context runs one execution at a time (E2B's lock per context); its
messages are read by one task per channel and routed to the execution they
answer by the request's msg_id.
"""

import asyncio
import logging
import os
import uuid

from jupyter_client.ioloop import AsyncIOLoopKernelManager
from traitlets.config import Config

import envd
import outputs

log = logging.getLogger("contexts")

# Languages and the kernels that run them (Jupyter kernel spec names).
KERNELS = {"python": "python3", "r": "ir", "bash": "bash"}
# Seconds between keepalive lines while an execution is silent, so a client
# that went away is noticed by a write (E2B's KEEPALIVE_INTERVAL).
KEEPALIVE_S = 5
KERNEL_READY_S = 60
# After an interrupt, how long the cell may take to end before the
# execution is left to finish on its own.
INTERRUPT_GRACE_S = 5
# A kernel that dies is started again on the same ports (so the client
# stays connected), as Jupyter's server restarts it.
KERNEL_CONFIG = Config({"KernelRestarter": {"random_ports_until_alive": False}})

END = object()  # the execution is over
GONE = object()  # its client went away


def normalize_language(language):
    """E2B's normalize_language: empty is python, js is javascript."""
    language = (language or "python").strip().lower() or "python"
    return {"js": "javascript", "ts": "typescript"}.get(language, language)


class ContextError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Execution:
    def __init__(self, background=False):
        self.queue = asyncio.Queue()
        self.background = background
        self.accepted = False  # execute_input seen (busy, for a silent one)
        self.errored = False
        self.reply = None  # execute_reply content


class Context:
    def __init__(self, language, cwd):
        self.id = str(uuid.uuid4())
        self.language = language
        self.cwd = cwd
        self.lock = asyncio.Lock()
        self.executions = {}
        self.globals_ = None  # the sandbox's env vars, once set in the kernel
        self.km = None
        self.kc = None
        self.readers = []
        self.restarted = None  # after the restarter's restart: the wait for the new kernel

    def info(self):
        return {"id": self.id, "language": self.language, "cwd": self.cwd}

    async def start(self):
        kernel = KERNELS.get(self.language)
        if not kernel:
            raise ContextError(500, f"Failed to create context: no kernel for language '{self.language}' "
                                    f"in this template (it has {', '.join(sorted(KERNELS))})")
        if not os.path.isdir(self.cwd):
            raise ContextError(400, f"Failed to set working directory: '{self.cwd}' is not a directory")
        self.km = AsyncIOLoopKernelManager(kernel_name=kernel, config=KERNEL_CONFIG)
        await self.km.start_kernel(cwd=self.cwd)
        self.km.start_restarter()
        self.km.add_restart_callback(self._on_restart, "restart")
        self.kc = self.km.client()
        self.kc.start_channels()
        try:
            await self.kc.wait_for_ready(timeout=KERNEL_READY_S)
        except Exception:
            await self.close()
            raise
        self._start_readers()

    def _start_readers(self):
        # wait_for_ready reads the channels itself: never beside these.
        self.readers = [asyncio.create_task(self._read(self.kc.get_iopub_msg)),
                        asyncio.create_task(self._read(self.kc.get_shell_msg))]

    def _stop_readers(self):
        for task in self.readers:
            task.cancel()
        self.readers = []

    async def close(self):
        self._stop_readers()
        self._end_all(outputs.error("ContextRemoved", "The context was removed", ""))
        if self.kc:
            self.kc.stop_channels()
        if self.km:
            self.km.stop_restarter()
            await self.km.shutdown_kernel(now=True)

    async def restart(self):
        if self.restarted:  # the restarter's restart first: one reader of the channels at a time
            restarted, self.restarted = self.restarted, None
            await restarted
        self._end_all(outputs.error("ContextRestarting", "Context was restarted", ""))
        self._stop_readers()
        self.globals_ = None
        try:
            await self.km.restart_kernel(now=True)
            await self.kc.wait_for_ready(timeout=KERNEL_READY_S)
        finally:
            self._start_readers()

    async def interrupt(self):
        try:
            await self.km.interrupt_kernel()
        except Exception as e:  # the kernel may be gone already
            log.warning("interrupting context %s: %s", self.id, e)

    def _on_restart(self):
        log.warning("context %s: its kernel died and is started again", self.id)
        self.globals_ = None
        self._end_all(outputs.error("ContextRestarting", "Context was restarted", ""))
        # The restarter starts the new kernel and returns: a cell sent before
        # that kernel answers can lose its output on IOPub (whose subscription
        # is made again), so the next cell waits for it (execute).
        self.restarted = asyncio.ensure_future(self._await_restarted())

    async def _await_restarted(self):
        self._stop_readers()
        try:
            await self.kc.wait_for_ready(timeout=KERNEL_READY_S)
        except Exception as e:
            log.warning("context %s: the restarted kernel is not ready: %s", self.id, e)
        finally:
            self._start_readers()

    def _end_all(self, error):
        for ex in self.executions.values():
            if not ex.background:
                ex.queue.put_nowait(error)
            ex.queue.put_nowait(END)

    async def _read(self, get):
        while True:
            try:
                msg = await get()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("context %s: reading the kernel: %s", self.id, e)
                await asyncio.sleep(0.1)
                continue
            ex = self.executions.get(msg.get("parent_header", {}).get("msg_id"))
            if ex:
                self._route(ex, msg)

    def _route(self, ex, msg):
        kind = msg["msg_type"]
        content = msg["content"]
        if kind == "status":
            state = content.get("execution_state")
            if state == "busy" and ex.background:
                ex.accepted = True
            elif state == "idle" and ex.accepted:
                ex.queue.put_nowait(END)
            return
        if kind == "execute_input":
            ex.accepted = True
        if kind == "execute_reply":
            ex.reply = content
            status = content.get("status")
            if status == "error" and not ex.errored and not ex.background:
                ex.errored = True
                ex.queue.put_nowait(outputs.error(content.get("ename", ""), content.get("evalue", ""),
                                                  outputs.traceback_text(content)))
            elif status == "aborted":
                ex.queue.put_nowait(outputs.error("ExecutionAborted", "Execution was aborted", ""))
                ex.queue.put_nowait(END)
            return
        if ex.background:
            return
        if kind == "error":
            if ex.errored:
                return
            ex.errored = True
        line = outputs.from_iopub(msg)
        if line:
            ex.queue.put_nowait(line)

    def _send(self, code, background):
        msg_id = self.kc.execute(code, silent=background, store_history=not background,
                                 allow_stdin=False, stop_on_error=True)
        ex = Execution(background)
        self.executions[msg_id] = ex
        return msg_id, ex

    async def _run_quietly(self, code):
        """Runs code of the server's own (setting env vars): no output, no
        execution count; its failure is logged."""
        msg_id, ex = self._send(code, True)
        try:
            while await ex.queue.get() is not END:
                pass
        finally:
            del self.executions[msg_id]
        if ex.reply and ex.reply.get("status") != "ok":
            log.warning("context %s: setting env vars failed: %s", self.id, ex.reply.get("evalue"))

    async def execute(self, code, envs, emit, gone):
        """Runs code with envs set for it, calling emit(line) for each line
        of its stream. gone is a future that resolves when the client went
        away: the kernel is interrupted and the execution abandoned."""
        if not await _first(self.lock.acquire(), gone):
            return
        try:
            if self.restarted:
                restarted, self.restarted = self.restarted, None
                await restarted
            if self.globals_ is None:
                self.globals_ = envd.env_vars()
                setup = envd.set_code(self.language, self.globals_)
                if setup:
                    await self._run_quietly(setup)
            if envs:
                await self._run_quietly(envd.set_code(self.language, envs))
            msg_id, ex = self._send(code, False)
            try:
                await self._stream(ex, emit, gone)
            finally:
                self.executions.pop(msg_id, None)
            if envs:
                restore = envd.restore_code(self.language, envs, self.globals_ or {})
                if restore:
                    await self._run_quietly(restore)
        finally:
            self.lock.release()

    async def _stream(self, ex, emit, gone):
        gone.add_done_callback(lambda _: ex.queue.put_nowait(GONE))
        while True:
            try:
                item = await asyncio.wait_for(ex.queue.get(), KEEPALIVE_S)
            except asyncio.TimeoutError:
                item = {"type": "keepalive"}
            if item is END:
                return
            if item is GONE or not await emit(item):
                log.info("context %s: the client went away: interrupting", self.id)
                await self.interrupt()
                # The interrupted cell ends (KeyboardInterrupt) before the next runs.
                try:
                    await asyncio.wait_for(_until_end(ex), INTERRUPT_GRACE_S)
                except asyncio.TimeoutError:
                    log.warning("context %s: the interrupted cell runs on", self.id)
                return


async def _until_end(ex):
    while await ex.queue.get() is not END:
        pass


async def _first(awaitable, gone):
    """Awaits awaitable unless gone resolves first: True when it ran."""
    task = asyncio.ensure_future(awaitable)
    await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        return True
    task.cancel()
    return False
