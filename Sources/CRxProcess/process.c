// See rx_process.h.
#include "rx_process.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

int rx_process_forbid_core_dumps(void) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -errno;
    // Before PR_SET_DUMPABLE: a non-dumpable process's /proc/self files belong to root, and a
    // process of another user could no longer open its own coredump_filter for writing.
    int fd = open("/proc/self/coredump_filter", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t written;
        do { written = write(fd, "0\n", 2); } while (written < 0 && errno == EINTR);
        int error = written == 2 ? 0 : (written < 0 ? errno : EIO);
        close(fd);
        if (error != 0) return -error;
    } else if (errno != ENOENT) {
        return -errno;
    }
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -errno;
    return 0;
}
