// What rxvault asks of the kernel for every process that may hold a key or decrypted records,
// that Swift cannot call itself (prctl is variadic). Used once, at the start of `main`
// (Sources/rxvault/Support/ProcessProtection.swift), so every command, `serve`, the unlock agent
// and the attachment checker child are covered by the same code.
#ifndef RX_PROCESS_H
#define RX_PROCESS_H

// No core dump of this process, whatever the shell's `ulimit -c` or the machine's core_pattern:
// RLIMIT_CORE 0 (soft and hard, so nothing in the process raises it again), PR_SET_DUMPABLE 0
// (the kernel writes no core for a non-dumpable process while fs.suid_dumpable is 0, and the
// user's other processes cannot ptrace it or read /proc/PID/mem), and a coredump_filter of 0 (a
// dump piped to a handler when fs.suid_dumpable is 2 would hold no memory). Returns 0, or
// -errno of the first step that failed; the coredump_filter step is skipped where /proc is not
// mounted.
int rx_process_forbid_core_dumps(void);

#endif
