// The C side of rxvault's agent (Sources/RxAgent): see rx_agent.h for why each function is here.
#define _GNU_SOURCE   // struct ucred, posix_spawn_file_actions_addclosefrom_np, POSIX_SPAWN_SETSID
#include "rx_agent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int rx_agent_peer(int fd, uid_t *uid, pid_t *pid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    if (length != sizeof credentials) return -EPROTO;
    *uid = credentials.uid;
    *pid = credentials.pid;
    return 0;
}

int rx_agent_signal_fd(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) return -errno;
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int rx_agent_read_signal(int fd) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    return n == (ssize_t)sizeof info ? (int)info.ssi_signo : 0;
}

static int address(const char *path, struct sockaddr_un *addr) {
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof addr->sun_path) return -ENAMETOOLONG;
    memset(addr, 0, sizeof *addr);
    addr->sun_family = AF_UNIX;
    memcpy(addr->sun_path, path, length);
    return 0;
}

int rx_agent_listen(const char *path, int backlog) {
    struct sockaddr_un addr;
    int status = address(path, &addr);
    if (status != 0) return status;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    // The socket file is created by bind with the umask's mode: create it 0600 from the start.
    mode_t previous = umask(0177);
    int bound = bind(fd, (struct sockaddr *)&addr, sizeof addr);
    int error = errno;
    umask(previous);
    if (bound != 0 || chmod(path, 0600) != 0 || listen(fd, backlog) != 0) {
        if (bound == 0) { error = errno; unlink(path); }
        close(fd);
        return -error;
    }
    return fd;
}

int rx_agent_connect(const char *path) {
    struct sockaddr_un addr;
    int status = address(path, &addr);
    if (status != 0) return status;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int result;
    do { result = connect(fd, (struct sockaddr *)&addr, sizeof addr); } while (result != 0 && errno == EINTR);
    if (result != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int rx_agent_spawn(const char *path, char *const argv[], char *const envp[], int in, int out, int err, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    if (posix_spawn_file_actions_init(&actions) != 0) return -ENOMEM;
    if (posix_spawnattr_init(&attributes) != 0) { posix_spawn_file_actions_destroy(&actions); return -ENOMEM; }
    // Default signal handling and an empty mask: the caller may ignore SIGPIPE or block signals.
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_adddup2(&actions, in, 0);
    posix_spawn_file_actions_adddup2(&actions, out, 1);
    posix_spawn_file_actions_adddup2(&actions, err, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawn_file_actions_addchdir_np(&actions, "/");
    int status = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    return -status;
}

int rx_agent_max_socket_path(void) {
    struct sockaddr_un addr;
    return (int)sizeof addr.sun_path - 1;
}
