/* The tests' world with no polkit and no system bus, whatever the machine runs.
 *
 * Loaded with LD_PRELOAD into every archgate a test starts (the cargo harness,
 * crates/archgate/tests/archgate/support/world.rs, and tests/world.sh for the suites). It makes
 * two of root's places look absent to that process, without touching the machine:
 *   /usr/share/polkit-1/actions  archgate's actions file is read from there: with it absent,
 *                                presence is "not installed" (what `auto` then means is tested
 *                                against root's files in person/presence/tests.rs);
 *   /run/dbus                    the system bus: nothing is asked of the machine's polkitd,
 *                                NetworkManager or iwd.
 * A mount namespace would do the same for root only: a normal user's namespace shows root's
 * files as unmapped (65534), and archgate's trust checks then refuse every program.
 *
 * archgate reads both by fixed absolute paths (person/presence/root.rs), so only absolute paths
 * are matched. Each call is passed on (dlsym RTLD_NEXT) unless its path is under one of them;
 * then it fails with ENOENT, as for a machine without polkit. Rust's std calls statx through a
 * weak symbol so that this kind of interposition reaches it; it also probes statx with a null
 * path, which glibc's headers declare impossible (nonnull): `hidden` hides the pointer from the
 * optimiser first, or its null check is optimised away and that probe crashes.
 *
 * Written for archgate's tests; no third-party text. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char *const HIDDEN[] = {"/usr/share/polkit-1/actions", "/run/dbus"};

static int hidden(const char *path) {
    __asm__("" : "+r"(path));
    if (path == NULL || path[0] != '/')
        return 0;
    for (size_t i = 0; i < sizeof HIDDEN / sizeof HIDDEN[0]; i++) {
        size_t n = strlen(HIDDEN[i]);
        if (strncmp(path, HIDDEN[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
            return 1;
    }
    return 0;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
#define ABSENT(path)        \
    do {                    \
        if (hidden(path)) { \
            errno = ENOENT; \
            return -1;      \
        }                   \
    } while (0)

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf) {
    ABSENT(path);
    return NEXT(statx)(dirfd, path, flags, mask, buf);
}

int stat(const char *path, struct stat *buf) {
    ABSENT(path);
    return NEXT(stat)(path, buf);
}

int stat64(const char *path, struct stat64 *buf) {
    ABSENT(path);
    return NEXT(stat64)(path, buf);
}

int lstat(const char *path, struct stat *buf) {
    ABSENT(path);
    return NEXT(lstat)(path, buf);
}

int lstat64(const char *path, struct stat64 *buf) {
    ABSENT(path);
    return NEXT(lstat64)(path, buf);
}

int fstatat(int dirfd, const char *path, struct stat *buf, int flags) {
    ABSENT(path);
    return NEXT(fstatat)(dirfd, path, buf, flags);
}

int fstatat64(int dirfd, const char *path, struct stat64 *buf, int flags) {
    ABSENT(path);
    return NEXT(fstatat64)(dirfd, path, buf, flags);
}

int access(const char *path, int mode) {
    ABSENT(path);
    return NEXT(access)(path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags) {
    ABSENT(path);
    return NEXT(faccessat)(dirfd, path, mode, flags);
}

/* The mode argument is there only with O_CREAT or O_TMPFILE. */
#define MODE_OF(flags, mode)                                          \
    do {                                                              \
        if ((flags) & (O_CREAT | O_TMPFILE)) {                        \
            va_list ap;                                               \
            va_start(ap, flags);                                      \
            mode = va_arg(ap, mode_t);                                \
            va_end(ap);                                               \
        }                                                             \
    } while (0)

int open(const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_OF(flags, mode);
    ABSENT(path);
    return NEXT(open)(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_OF(flags, mode);
    ABSENT(path);
    return NEXT(open64)(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_OF(flags, mode);
    ABSENT(path);
    return NEXT(openat)(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_OF(flags, mode);
    ABSENT(path);
    return NEXT(openat64)(dirfd, path, flags, mode);
}

DIR *opendir(const char *path) {
    if (hidden(path)) {
        errno = ENOENT;
        return NULL;
    }
    return NEXT(opendir)(path);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    if (addr != NULL && addr->sa_family == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path)) {
        const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
        char path[sizeof un->sun_path + 1];
        size_t n = len - offsetof(struct sockaddr_un, sun_path);
        if (n > sizeof un->sun_path)
            n = sizeof un->sun_path;
        memcpy(path, un->sun_path, n);
        path[n] = '\0';
        ABSENT(path);
    }
    return NEXT(connect)(fd, addr, len);
}
