/* libc_probe: reads through the stdio and dirent calls whose open glibc
 * makes internally (no open hook sees it), so that the preload must
 * interpose the call itself. Built twice: as is, and with
 * _FILE_OFFSET_BITS=64, where glibc's headers redirect freopen to
 * freopen64 (as in coreutils and most distribution packages).
 *
 *   libc_probe freopen PATH: stdin reopened on PATH ("r"); prints what
 *     fd 0 then reads, and "fd:N" (N: the stream's descriptor)
 *   libc_probe opendir DIR: prints DIR's names, one a line (not . and ..)
 * Exits 0, or with the errno of the call that failed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) return 100;
  const char* op = argv[1];
  const char* path = argv[2];
  if (!strcmp(op, "freopen")) {
    if (freopen(path, "r", stdin) == NULL) return errno;
    char buf[256];
    size_t n = fread(buf, 1, sizeof buf, stdin);
    if (ferror(stdin)) return errno;
    if (fwrite(buf, 1, n, stdout) != n) return errno;
    printf("fd:%d\n", fileno(stdin));
    return fflush(stdout) == 0 ? 0 : errno;
  }
  if (!strcmp(op, "opendir")) {
    DIR* d = opendir(path);
    if (d == NULL) return errno;
    errno = 0;
    for (struct dirent* e; (e = readdir(d)) != NULL; errno = 0) {
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) printf("%s\n", e->d_name);
    }
    int err = errno;
    closedir(d);
    return err;
  }
  return 100;
}
