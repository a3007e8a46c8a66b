/* Stands in for ripgrep where a test bind-mounts it over /usr/bin/rg (in a
 * mount namespace of the test's own). `--version` says whether it could
 * create a file in the shared /tmp, which a confined process cannot; any
 * other command line finds nothing (status 1, as ripgrep's "no match"). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2 || strcmp(argv[1], "--version") != 0) return 1;
  char path[64];
  snprintf(path, sizeof path, "/tmp/cordon-fake-rg-%d", (int)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    close(fd);
    unlink(path);
  }
  printf("ripgrep 0.0.0-fake (outside write %s)\n", fd >= 0 ? "done" : "refused");
  return 0;
}
