/* stress: concurrency helpers for the notify tests. Exit 0 on success.
 *   stress threads N ITER        N threads each create/write/rename/unlink ITER files
 *   stress race OUTSIDE SECONDS  one thread swaps ./dir between a real directory and a
 *                                symlink to OUTSIDE while others write and unlink
 *                                dir/f and rename into it; prints how many writes landed
 *   stress loop-create           creates files n0, n1, ... forever (until killed)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int iterations;
static atomic_int failures;
static atomic_int stop;

static void* worker(void* arg) {
  long id = (long)arg;
  char a[64], b[64];
  for (int i = 0; i < iterations; ++i) {
    snprintf(a, sizeof a, "t%ld-%d.tmp", id, i);
    snprintf(b, sizeof b, "t%ld-%d.txt", id, i);
    int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, "x", 1) != 1 || close(fd) != 0) { failures++; continue; }
    if (rename(a, b) != 0) failures++;
    if (chmod(b, 0600) != 0) failures++;
    if (unlink(b) != 0) failures++;
  }
  return NULL;
}

static void* swapper(void* arg) {
  const char* outside = arg;
  while (!stop) {
    rename("dir", "dir.real");
    symlink(outside, "dir");
    unlink("dir");
    rename("dir.real", "dir");
  }
  return NULL;
}

static void* racer(void* arg) {
  (void)arg;
  while (!stop) {
    int fd = open("dir/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    unlink("dir/f");
    int g = open("g", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (g >= 0) close(g);
    rename("g", "dir/g");
    chmod("dir/victim", 0777);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) return 100;
  if (!strcmp(argv[1], "threads") && argc == 4) {
    int n = atoi(argv[2]);
    iterations = atoi(argv[3]);
    pthread_t t[256];
    for (long i = 0; i < n && i < 256; ++i) pthread_create(&t[i], NULL, worker, (void*)i);
    for (long i = 0; i < n && i < 256; ++i) pthread_join(t[i], NULL);
    if (failures) fprintf(stderr, "stress: %d failures\n", (int)failures);
    return failures ? 1 : 0;
  }
  if (!strcmp(argv[1], "race") && argc == 4) {
    mkdir("dir", 0755);
    pthread_t s, r[3];
    pthread_create(&s, NULL, swapper, argv[2]);
    for (int i = 0; i < 3; ++i) pthread_create(&r[i], NULL, racer, NULL);
    sleep((unsigned)atoi(argv[3]));
    stop = 1;
    pthread_join(s, NULL);
    for (int i = 0; i < 3; ++i) pthread_join(r[i], NULL);
    return 0;
  }
  if (!strcmp(argv[1], "loop-create")) {
    char name[64];
    for (long i = 0;; ++i) {
      snprintf(name, sizeof name, "n%ld", i);
      int fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) close(fd);
      usleep(1000);
    }
  }
  return 100;
}
