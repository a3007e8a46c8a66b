/* preload_stress: drives the preload hard from the contexts real programs
 * use it from. Exit 0 when every operation did what it should, else the
 * errno (or 100+) of the first failure. Prints "calls N" (the interposed
 * calls it made) on stdout so tests can match the report stream.
 *
 *   preload_stress threads T N PATH    T threads x N open+close of PATH
 *   preload_stress forkexec N PROG ARG...   N x (fork, open in the child,
 *                                       exec PROG ARG..., wait), while a
 *                                       second thread keeps opening
 *   preload_stress signals N PATH      N opens of PATH in main while a
 *                                       SIGALRM handler opens it too
 *   preload_stress vfork N PROG ARG...  N x (vfork, open in the child, exec
 *                                       PROG ARG..., wait)
 *   preload_stress vfork-closefds N PROG ARG...  the same, with an open in
 *                                       the parent before each vfork and the
 *                                       child closing every fd from 3 before
 *                                       its exec (Python's subprocess does)
 *   preload_stress exit N PATH         N opens of PATH, then _exit (no
 *                                       destructors run)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* g_path;
static long g_iters;
static atomic_int g_fail;
static atomic_long g_calls;
static atomic_int g_stop;

static void OpenOnce(void) {
  int fd = open(g_path, O_RDONLY | O_CLOEXEC);
  atomic_fetch_add(&g_calls, 1);
  if (fd < 0) {
    int zero = 0;
    atomic_compare_exchange_strong(&g_fail, &zero, errno);
    return;
  }
  close(fd);
}

static void* Worker(void* arg) {
  (void)arg;
  for (long i = 0; i < g_iters; ++i) OpenOnce();
  return NULL;
}

static void* Spinner(void* arg) {
  (void)arg;
  while (!atomic_load(&g_stop)) OpenOnce();
  return NULL;
}

static void OnAlarm(int sig) {
  (void)sig;
  int saved = errno;
  OpenOnce();
  errno = saved;
}

static int Finish(void) {
  printf("calls %ld\n", atomic_load(&g_calls));
  return atomic_load(&g_fail);
}

int main(int argc, char** argv) {
  if (argc < 3) return 100;
  if (!strcmp(argv[1], "threads") && argc == 5) {
    int threads = atoi(argv[2]);
    g_iters = atol(argv[3]);
    g_path = argv[4];
    pthread_t t[64];
    if (threads < 1 || threads > 64) return 101;
    for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, Worker, NULL);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    return Finish();
  }
  if (!strcmp(argv[1], "forkexec") && argc >= 4) {
    long n = atol(argv[2]);
    g_path = "/dev/null";
    pthread_t spin;
    pthread_create(&spin, NULL, Spinner, NULL);
    for (long i = 0; i < n; ++i) {
      pid_t pid = fork();
      if (pid < 0) return errno;
      if (pid == 0) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) _exit(102);
        execv(argv[3], argv + 3);
        _exit(103);
      }
      int status;
      if (waitpid(pid, &status, 0) != pid) return errno;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        atomic_store(&g_stop, 1);
        pthread_join(spin, NULL);
        fprintf(stderr, "child %ld: status %d\n", i, status);
        return 104;
      }
    }
    atomic_store(&g_stop, 1);
    pthread_join(spin, NULL);
    return Finish();
  }
  if (!strcmp(argv[1], "signals") && argc == 4) {
    g_iters = atol(argv[2]);
    g_path = argv[3];
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = OnAlarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (long i = 0; i < g_iters; ++i) OpenOnce();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    return Finish();
  }
  const int close_fds = !strcmp(argv[1], "vfork-closefds");
  if ((close_fds || !strcmp(argv[1], "vfork")) && argc >= 4) {
    long n = atol(argv[2]);
    for (long i = 0; i < n; ++i) {
      if (close_fds) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return errno;
        close(fd);
        atomic_fetch_add(&g_calls, 1);
      }
      pid_t pid = vfork();
      if (pid < 0) return errno;
      if (pid == 0) {
        /* The child borrows the parent's memory: its call is counted and
         * batched as the parent's. */
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0) _exit(102);
        if (close_fds && syscall(SYS_close_range, 3, ~0U, 0) != 0) _exit(105);
        execv(argv[3], argv + 3);
        _exit(103);
      }
      atomic_fetch_add(&g_calls, 1);
      int status;
      if (waitpid(pid, &status, 0) != pid) return errno;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "child %ld: status %d\n", i, status);
        return 104;
      }
    }
    return Finish();
  }
  if (!strcmp(argv[1], "exit") && argc == 4) {
    g_iters = atol(argv[2]);
    g_path = argv[3];
    for (long i = 0; i < g_iters; ++i) OpenOnce();
    int rc = Finish();
    fflush(stdout);
    _exit(rc);
  }
  return 100;
}
