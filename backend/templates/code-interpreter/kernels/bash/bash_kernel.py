"""A Jupyter kernel for bash: metakernel's BashKernel (Debian's
python3-metakernel) as bash_kernel, which E2B's template runs, behaves:
output lines end in a plain newline, and a command line's non-zero exit
status is the execution's error (name "", value the status)."""

from metakernel.process_metakernel import BashKernel


class Bash(BashKernel):
    _cr = ""  # a CR that ended the last write: its LF may begin the next

    def Write(self, message):
        # bash runs on a terminal, whose line discipline ends lines in CR LF.
        text = self._cr + message
        self._cr = "\r" if text.endswith("\r") else ""
        text = text[:-1] if self._cr else text
        if text:
            super().Write(text.replace("\r\n", "\n"))

    def check_exitcode(self):
        status = self.wrapper.run_command("echo $?").strip()
        if status.isdigit() and status != "0":
            return int(status), []
        return 0, None


if __name__ == "__main__":
    Bash.run_as_main()
