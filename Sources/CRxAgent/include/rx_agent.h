// The system calls rxvault's agent needs that Swift cannot reach: struct ucred
// (SO_PEERCRED, _GNU_SOURCE), signalfd, posix_spawn with a new session and no inherited
// descriptors, and sockaddr_un. Each returns 0 (or a descriptor) on success and -errno on failure.
#ifndef RX_AGENT_H
#define RX_AGENT_H

#include <sys/types.h>

// The uid and pid of the process at the other end of a connected Unix socket, as the kernel
// recorded them at connect(2).
int rx_agent_peer(int fd, uid_t *uid, pid_t *pid);

// Blocks SIGTERM, SIGINT and SIGHUP and returns a descriptor (non-blocking, close-on-exec) that
// becomes readable when one arrives, so the accept loop can poll for them.
int rx_agent_signal_fd(void);

// Reads one pending signal from `fd`: its number, or 0 if none.
int rx_agent_read_signal(int fd);

// A listening Unix stream socket bound at `path` (which must not exist), mode 0600.
int rx_agent_listen(const char *path, int backlog);

// A Unix stream socket connected to `path`.
int rx_agent_connect(const char *path);

// Starts `path` with `argv` and `envp` in a new session (setsid), with `in`, `out` and `err` as
// its descriptors 0, 1 and 2 and nothing else open; the working directory is "/".
int rx_agent_spawn(const char *path, char *const argv[], char *const envp[], int in, int out, int err, pid_t *pid);

// The longest path a Unix socket address holds (sun_path, without its terminating zero).
int rx_agent_max_socket_path(void);

#endif
