"""Background processes of a benchmark or soak run, each recorded by PID and stopped
by PID on exit (normal end, error, Ctrl-C or SIGTERM). Nothing is ever
stopped by name."""

import atexit
import os
import signal
import subprocess
import sys
import time

_started = {}  # pid -> (Popen, label)
_cleanups = []  # callables run once on exit, newest first


def log(message):
    print(time.strftime("%H:%M:%S ") + message, file=sys.stderr, flush=True)


def start(args, label, env=None, stdout=None, stderr=None, cwd=None):
    """Starts a background process and records its PID."""
    out = open(stdout, "ab") if isinstance(stdout, str) else (stdout or subprocess.DEVNULL)
    err = open(stderr, "ab") if isinstance(stderr, str) else (stderr or subprocess.DEVNULL)
    proc = subprocess.Popen(args, env=env, stdout=out, stderr=err, cwd=cwd,
                            stdin=subprocess.DEVNULL)
    _started[proc.pid] = (proc, label)
    log(f"started {label} (pid {proc.pid})")
    return proc


def stop(proc, timeout=15):
    """SIGTERM, then SIGKILL after `timeout` seconds; by PID, only ours."""
    if proc is None or proc.pid not in _started:
        return None
    label = _started[proc.pid][1]
    if proc.poll() is None:
        try:
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            log(f"{label} (pid {proc.pid}) ignored SIGTERM; SIGKILL")
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)
    del _started[proc.pid]
    return proc.returncode


def on_exit(callback):
    """Registers a cleanup step (e.g. stopping the cluster) run after the
    recorded processes are stopped."""
    _cleanups.append(callback)


def stop_all():
    for pid in list(_started):
        proc, _ = _started[pid]
        try:
            stop(proc)
        except Exception as error:  # keep stopping the others
            log(f"could not stop pid {pid}: {error}")
    while _cleanups:
        callback = _cleanups.pop()
        try:
            callback()
        except Exception as error:
            log(f"cleanup step failed: {error}")


def _on_signal(signum, _frame):
    log(f"signal {signum}: stopping everything this run started")
    stop_all()
    sys.exit(128 + signum)


def install_handlers():
    atexit.register(stop_all)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)


def run(args, timeout, env=None, check=True, capture=True, input_text=None):
    """A foreground command with a timeout; returns CompletedProcess."""
    result = subprocess.run(args, env=env, timeout=timeout, input=input_text,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.PIPE if capture else None, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited {result.returncode}:\n"
                           f"{(result.stderr or '')[-2000:]}")
    return result
