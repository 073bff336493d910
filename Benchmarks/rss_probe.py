#!/usr/bin/env python3
"""Peak RSS of one process itself (not its children), before and after its passphrase KDF.

Usage: rss_probe.py RESULT_FILE -- COMMAND [ARGS...]

Why not just /usr/bin/time -f %M: on Linux, wait4()'s ru_maxrss is the maximum over the process
*and every descendant it reaped*, so for `rxvault attach` it is max(rxvault, validator child); and
every rxvault command that opens a vault first runs Argon2id, whose 64 MiB ("interactive") block
is mmapped, touched and unmapped. The lifetime peak of any command is therefore >= runtime + 64 MiB,
which hides any streaming cost below ~64 MiB.

What this does instead:
  * runs COMMAND under ptrace (PTRACE_TRACEME, only the main thread, children are not traced)
    with PTRACE_O_TRACEEXIT, so it can read /proc/PID/status at the exit stop, while the address
    space still exists: VmHWM there is exactly the process's own peak (what ru_maxrss would be
    for this process alone);
  * polls /proc/PID/status every 0.5 ms; when VmHWM - VmRSS >= 32 MiB (the KDF block was just
    released), it writes "5" to /proc/PID/clear_refs, which resets VmHWM to the current RSS
    (Linux >= 4.0). The VmHWM read at exit is then the peak *after* the KDF, and
    peak_after_kdf - rss_at_reset is what the rest of the command (streaming, SQLite, ...) added.

COMMAND inherits stdin/stdout/stderr. RESULT_FILE gets one line of key=value pairs (KiB, seconds):
  lifetime_hwm  own peak over the whole run, KDF included (-1 if unknown)
  reset         1 if the KDF release was seen and VmHWM reset, else 0
  rss_at_reset  RSS right after the reset (-1 if no reset)
  hwm_after     own peak after the reset (-1 if no reset)
  sampled_after largest VmRSS seen by polling after the reset (a lower bound; sanity check)
  ru_maxrss     wait4's ru_maxrss: max over the process and the children it reaped (= time %M)
  wall          wall-clock seconds
  status        the command's exit status (128+N if killed by signal N)
The exit status of rss_probe.py is the command's.
"""
import ctypes
import os
import signal
import sys
import time

PTRACE_TRACEME = 0
PTRACE_CONT = 7
PTRACE_SETOPTIONS = 0x4200
PTRACE_O_TRACEEXIT = 0x40
PTRACE_O_EXITKILL = 0x100000
PTRACE_EVENT_EXIT = 6
KDF_RELEASE_KIB = 32 * 1024
POLL_SECONDS = 0.0005

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(request: int, pid: int, addr: int = 0, data: int = 0) -> None:
    if libc.ptrace(request, pid, ctypes.c_void_p(addr), ctypes.c_void_p(data)) == -1:
        err = ctypes.get_errno()
        raise OSError(err, f"ptrace({request}): {os.strerror(err)}")


def memory(pid: int) -> dict:
    """VmRSS and VmHWM in KiB; empty once the address space is gone."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:")):
                    key, value = line.split(":", 1)
                    values[key] = int(value.split()[0])
    except OSError:
        pass
    return values


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__.strip(), file=sys.stderr)
        return 2
    result_path, command = sys.argv[1], sys.argv[3:]

    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            ptrace(PTRACE_TRACEME, 0)
            os.execvp(command[0], command)
        except OSError as error:
            print(f"rss_probe.py: cannot run {command[0]}: {error}", file=sys.stderr)
        os._exit(127)

    _, status = os.waitpid(pid, 0)  # the SIGTRAP stop after execve
    if not os.WIFSTOPPED(status):
        print("rss_probe.py: the command did not start under ptrace", file=sys.stderr)
        return 127
    ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL)
    ptrace(PTRACE_CONT, pid)

    lifetime_hwm = -1
    reset = False
    rss_at_reset = -1
    hwm_after = -1
    sampled_after = -1
    anon_at_reset = -1
    anon_after = -1
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited == pid:
            if os.WIFSTOPPED(status):
                sig = os.WSTOPSIG(status)
                if sig == signal.SIGTRAP and (status >> 16) == PTRACE_EVENT_EXIT:
                    final = memory(pid)
                    if "VmHWM" in final:
                        if reset:
                            hwm_after = final["VmHWM"]
                        lifetime_hwm = max(lifetime_hwm, final["VmHWM"])
                    ptrace(PTRACE_CONT, pid)
                else:
                    ptrace(PTRACE_CONT, pid, 0, sig)  # pass the signal on
                continue
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
            break
        sample = memory(pid)
        if "VmHWM" in sample:
            if not reset:
                lifetime_hwm = max(lifetime_hwm, sample["VmHWM"])
                if sample["VmHWM"] - sample["VmRSS"] >= KDF_RELEASE_KIB:
                    try:
                        with open(f"/proc/{pid}/clear_refs", "w") as f:
                            f.write("5")
                        reset = True
                        now = memory(pid)
                        rss_at_reset = now.get("VmRSS", -1)
                        sampled_after = rss_at_reset
                        anon_at_reset = anon_after = now.get("RssAnon", -1)
                    except OSError as error:
                        print(f"rss_probe.py: cannot reset the peak: {error}", file=sys.stderr)
            else:
                sampled_after = max(sampled_after, sample["VmRSS"])
                anon_after = max(anon_after, sample.get("RssAnon", -1))
        time.sleep(POLL_SECONDS)
    wall = time.monotonic() - start

    with open(result_path, "w") as f:
        f.write(f"lifetime_hwm={lifetime_hwm} reset={int(reset)} rss_at_reset={rss_at_reset} hwm_after={hwm_after} "
                f"sampled_after={sampled_after} anon_at_reset={anon_at_reset} anon_after={anon_after} ru_maxrss={usage.ru_maxrss} wall={wall:.3f} status={code}\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
