// The parser child's seccomp sandbox (Linux). After it is entered, the process can still read
// its stdin, write its stdout, allocate memory, read files (fontconfig reads its configuration
// when poppler renders text) and make threads, and nothing else: no sockets, no new processes,
// no program execution, no opening a file for writing, no creating, renaming or deleting files.
// A system call outside the allow-list fails with EPERM (not a kill), so a library that probes
// for something optional degrades instead of crashing; what matters is that the call does not
// happen. See SECURITY.md, "Attachment checker".
#define _GNU_SOURCE   // O_TMPFILE, CLONE_THREAD
#include "rx_validate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define RX_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define RX_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(value) BPF_STMT(BPF_RET | BPF_K, (value))
#define ALLOW_NR(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(SECCOMP_RET_ALLOW)
#define DENY SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)

// Flags that make an open able to change the file system.
// (O_TMPFILE includes O_DIRECTORY, which a read-only opendir uses: only its own bit counts.)
#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | (O_TMPFILE & ~O_DIRECTORY))

// open/openat: allowed only when the flags argument (index `arg`) has none of WRITE_FLAGS. The
// filter reads the low 32 bits of the argument (both architectures are little-endian).
#define ALLOW_READ_ONLY_OPEN(nr, arg) \
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4), \
    LOAD(args[arg]), \
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, 1, 0), \
    RET(SECCOMP_RET_ALLOW), \
    RET(DENY)

int rx_sandbox_enter(char message[RX_MESSAGE_SIZE]) {
    struct sock_filter filter[] = {
        LOAD(arch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RX_AUDIT_ARCH, 1, 0),
        RET(DENY),                                       // another ABI (32-bit calls on x86_64)
        LOAD(nr),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),   // x32 system calls
        RET(DENY),
#endif
        ALLOW_READ_ONLY_OPEN(SYS_openat, 2),
        LOAD(nr),
#ifdef SYS_open
        ALLOW_READ_ONLY_OPEN(SYS_open, 1),
        LOAD(nr),
#endif
        // clone only for threads (CLONE_THREAD); clone3 passes its flags in memory, which a
        // filter cannot read: ENOSYS makes the C library fall back to clone.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4),
        LOAD(args[0]),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
        RET(SECCOMP_RET_ALLOW),
        RET(DENY),
#ifdef SYS_clone3
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
        RET(SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
#endif
        // Reading and writing already open descriptors (stdin, stdout, files opened read-only).
        ALLOW_NR(SYS_read), ALLOW_NR(SYS_readv), ALLOW_NR(SYS_pread64), ALLOW_NR(SYS_write), ALLOW_NR(SYS_writev),
        ALLOW_NR(SYS_close), ALLOW_NR(SYS_lseek), ALLOW_NR(SYS_fstat), ALLOW_NR(SYS_newfstatat), ALLOW_NR(SYS_statx),
        ALLOW_NR(SYS_fcntl), ALLOW_NR(SYS_dup), ALLOW_NR(SYS_dup3), ALLOW_NR(SYS_getdents64), ALLOW_NR(SYS_readlinkat),
        ALLOW_NR(SYS_faccessat), ALLOW_NR(SYS_getcwd), ALLOW_NR(SYS_ppoll), ALLOW_NR(SYS_pipe2), ALLOW_NR(SYS_eventfd2),
#ifdef SYS_faccessat2
        ALLOW_NR(SYS_faccessat2),
#endif
#ifdef SYS_stat
        ALLOW_NR(SYS_stat), ALLOW_NR(SYS_lstat), ALLOW_NR(SYS_access), ALLOW_NR(SYS_readlink), ALLOW_NR(SYS_poll),
        ALLOW_NR(SYS_dup2),
#endif
        // Memory, threads, time, signals, exit.
        ALLOW_NR(SYS_mmap), ALLOW_NR(SYS_munmap), ALLOW_NR(SYS_mprotect), ALLOW_NR(SYS_mremap), ALLOW_NR(SYS_brk),
        ALLOW_NR(SYS_madvise), ALLOW_NR(SYS_futex), ALLOW_NR(SYS_set_robust_list), ALLOW_NR(SYS_get_robust_list),
        ALLOW_NR(SYS_membarrier),
#ifdef SYS_rseq
        ALLOW_NR(SYS_rseq),
#endif
        ALLOW_NR(SYS_sched_yield), ALLOW_NR(SYS_sched_getaffinity), ALLOW_NR(SYS_set_tid_address),
        ALLOW_NR(SYS_clock_gettime), ALLOW_NR(SYS_clock_getres), ALLOW_NR(SYS_gettimeofday), ALLOW_NR(SYS_nanosleep),
        ALLOW_NR(SYS_clock_nanosleep), ALLOW_NR(SYS_getrandom), ALLOW_NR(SYS_prlimit64), ALLOW_NR(SYS_getrlimit),
        ALLOW_NR(SYS_sysinfo), ALLOW_NR(SYS_uname), ALLOW_NR(SYS_getpid), ALLOW_NR(SYS_gettid), ALLOW_NR(SYS_getppid),
        ALLOW_NR(SYS_getuid), ALLOW_NR(SYS_geteuid), ALLOW_NR(SYS_getgid), ALLOW_NR(SYS_getegid),
        ALLOW_NR(SYS_rt_sigaction), ALLOW_NR(SYS_rt_sigprocmask), ALLOW_NR(SYS_rt_sigreturn), ALLOW_NR(SYS_sigaltstack),
        ALLOW_NR(SYS_tgkill), ALLOW_NR(SYS_restart_syscall), ALLOW_NR(SYS_exit), ALLOW_NR(SYS_exit_group),
        RET(DENY),
    };
    struct sock_fprog program = { .len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(message, RX_MESSAGE_SIZE, "no_new_privs refused: %s", strerror(errno));
        return -1;
    }
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) != 0) {
        snprintf(message, RX_MESSAGE_SIZE, "the kernel refused the seccomp filter: %s", strerror(errno));
        return -1;
    }
    message[0] = 0;
    return 0;
}

#else

int rx_sandbox_enter(char message[RX_MESSAGE_SIZE]) {
    snprintf(message, RX_MESSAGE_SIZE, "seccomp filters are built only for Linux on x86_64 and arm64");
    return -1;
}

#endif
