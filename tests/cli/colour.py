#!/usr/bin/env python3
"""Colour of the ai-hwaccel CLI as a user meets it, on a pseudo-terminal.

    colour.py PROGRAM MACHINE_DIR WARNING_MACHINE_DIR

Runs `PROGRAM detect --root MACHINE_DIR` with stdout (and stderr) on a pty, or on a pipe,
under several environments and --color settings, and checks where ANSI escape sequences
appear: on a terminal by default; never with NO_COLOR set (unless --color=always), never
with TERM=dumb, never on a pipe, never with --color=never; always with --color=always.
The table's text without its escapes must be the same whether coloured or not. On
WARNING_MACHINE_DIR (a machine whose detection warns), stdout and stderr are decided
apart: warnings are coloured when stderr alone is a terminal, and the table is not.
Exits 0 when every check holds, 1 with the failures listed otherwise.
"""
import os
import pty
import re
import select
import subprocess
import sys

ESC = re.compile(rb"\x1b\[[0-9;]*m")


def run_on_pty(argv, env):
    """Runs argv with stdin, stdout and stderr on one new pty; returns (exit code, output)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its standard streams are the pty's slave side
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    chunks = []
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], 60)
        except InterruptedError:
            continue
        if not ready:
            break  # no output for a minute: the wait below reports the result
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the slave side
            break
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks)


def run_on_pipe(argv, env):
    r = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    return r.returncode, r.stdout + r.stderr


def run_split(argv, env, pty_stream):
    """Runs argv with one of stdout/stderr ("out"/"err") on a pty and the other on a pipe;
    returns (exit code, what the pty got, what the pipe got)."""
    master, slave = os.openpty()
    streams = {"stdout": slave, "stderr": subprocess.PIPE} if pty_stream == "out" else \
              {"stdout": subprocess.PIPE, "stderr": slave}
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, **streams)
    os.close(slave)
    on_pty = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every holder of the slave side is gone
            break
        if not data:
            break
        on_pty.append(data)
    piped = (proc.stdout or proc.stderr).read()
    code = proc.wait()
    os.close(master)
    return code, b"".join(on_pty), piped


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    program, machine, warning_machine = sys.argv[1], sys.argv[2], sys.argv[3]
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "CLICOLOR_FORCE", "FORCE_COLOR")}
    base["TERM"] = "xterm-256color"
    detect = [program, "detect", "--root", machine]
    failures = []

    # (name, runner, extra arguments, environment changes, escapes expected)
    cases = [
        ("pty, defaults", run_on_pty, [], {}, True),
        ("pty, NO_COLOR=1", run_on_pty, [], {"NO_COLOR": "1"}, False),
        ("pty, NO_COLOR empty (means unset)", run_on_pty, [], {"NO_COLOR": ""}, True),
        ("pty, TERM=dumb", run_on_pty, [], {"TERM": "dumb"}, False),
        ("pty, TERM unset", run_on_pty, [], {"TERM": None}, False),
        ("pty, --color=never", run_on_pty, ["--color=never"], {}, False),
        ("pty, --color never (two words)", run_on_pty, ["--color", "never"], {}, False),
        ("pty, --color=auto", run_on_pty, ["--color=auto"], {}, True),
        ("pty, --color=always with NO_COLOR=1", run_on_pty, ["--color=always"], {"NO_COLOR": "1"}, True),
        ("pty, --tsv is never coloured", run_on_pty, ["--tsv"], {}, False),
        ("pty, --json is never coloured", run_on_pty, ["--json"], {}, False),
        ("pipe, defaults", run_on_pipe, [], {}, False),
        ("pipe, --color=auto", run_on_pipe, ["--color=auto"], {}, False),
        ("pipe, --color=always", run_on_pipe, ["--color=always"], {}, True),
        ("pipe, --color=always --tsv", run_on_pipe, ["--color=always", "--tsv"], {}, False),
    ]
    plain_text = None
    for name, runner, extra, changes, want in cases:
        env = dict(base)
        for k, v in changes.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        code, output = runner(detect + extra, env)
        has = ESC.search(output) is not None
        print(f"{name}: exit {code}, {'escapes' if has else 'no escapes'} in {len(output)} bytes")
        if code != 0:
            failures.append(f"{name}: exit code {code}")
        if has != want:
            failures.append(f"{name}: escapes {'missing' if want else 'present'}")
        if not extra or extra == ["--color=always"]:
            # Stripped of its escapes (and of the pty's \r), the table reads the same.
            text = ESC.sub(b"", output).replace(b"\r\n", b"\n")
            table = text.split(b"\n\n")[0]
            if plain_text is None:
                plain_text = table
            elif table != plain_text:
                failures.append(f"{name}: the table differs from the first one once escapes are removed")
        if want and b"\x1b[1m#" not in output:
            failures.append(f"{name}: the header is not bold")

    # A usage error's message on a terminal keeps the exit code 2 and is plain text.
    code, output = run_on_pty([program, "detect", "--columns", "frob"], base)
    if code != 2 or b"unknown column 'frob'" not in output:
        failures.append(f"pty, bad column: exit {code}, output {output[:200]!r}")
    # A bad --color value is a usage error naming it.
    code, output = run_on_pipe([program, "--color=sometimes", "detect"], base)
    if code != 2 or b"'sometimes'" not in output:
        failures.append(f"--color=sometimes: exit {code}, output {output[:200]!r}")

    # Each stream by itself: warnings (stderr) coloured on a terminal while the table goes
    # to a pipe uncoloured, and the other way round.
    warn = [program, "detect", "--root", warning_machine]
    code, tty, piped = run_split(warn, base, "err")
    print(f"stderr on a pty, stdout on a pipe: exit {code}")
    if b"\x1b[33mwarning:\x1b[0m" not in tty:
        failures.append(f"stderr on a pty: no yellow 'warning:' in {tty[:200]!r}")
    if ESC.search(piped) or b"#  kind" not in piped:
        failures.append(f"stdout on a pipe: escapes, or no table, in {piped[:200]!r}")
    code, tty, piped = run_split(warn, base, "out")
    print(f"stdout on a pty, stderr on a pipe: exit {code}")
    if b"\x1b[1m#" not in tty:
        failures.append(f"stdout on a pty: no bold header in {tty[:200]!r}")
    if ESC.search(piped) or b"warning:" not in piped:
        failures.append(f"stderr on a pipe: escapes, or no warning, in {piped[:200]!r}")
    env = dict(base, NO_COLOR="1")
    code, tty, piped = run_split(warn, env, "err")
    if ESC.search(tty) or b"warning:" not in tty:
        failures.append(f"stderr on a pty with NO_COLOR=1: escapes, or no warning, in {tty[:200]!r}")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
