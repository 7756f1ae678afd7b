"""How a comparison script runs its Runner: Ctrl-C, SIGTERM and SIGHUP end
it cleanly, its cleanup always runs (child processes killed, and whatever
else the runner made), and the exit status says whether anything failed."""

import signal

from .fmt import log


def run_guarded(runner):
    """runner.run(), then runner.cleanup() whatever happened; 130 if
    interrupted, 1 if runner.ctx.failures holds anything, else 0. A
    SystemExit from run() passes through, after the cleanup."""

    def on_term(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    # Ctrl-C even when started in the background by a shell that ignores SIGINT.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    try:
        runner.run()
    except KeyboardInterrupt:
        log("interrupted: killing child processes")
        return 130
    finally:
        runner.cleanup()
    if runner.ctx.failures:
        log(f"{len(runner.ctx.failures)} failure(s): see the Failures section")
        return 1
    return 0
