/*
 * The PTY echo round trip without a runtime: the bench's own measurement (write a line to
 * `stty -echo; exec cat` on a fresh pseudo-terminal, wait until it comes back) done by a C loop
 * of poll(2), read(2) and write(2), with no event loop or emulator in the way. What is left is
 * the kernel's line discipline, two process wake-ups and the machine's scheduling.
 *
 *   pty-echo ITERATIONS WARMUP   prints {"samples":[µs, …]}, the timed round trips in order
 */
#define _GNU_SOURCE
#include <poll.h>
#ifdef __APPLE__
#include <util.h>
#else
#include <pty.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "samples.h"

/* Reads from `fd` until `want` has arrived; 0 on success, -1 when the terminal ended. */
static int read_until(int fd, const char *want) {
  char seen[4096];
  size_t have = 0, need = strlen(want);
  for (;;) {
    struct pollfd ready = {fd, POLLIN, 0};
    if (poll(&ready, 1, 5000) <= 0) return -1;
    ssize_t n = read(fd, seen + have, sizeof seen - have);
    if (n <= 0) return -1;
    have += (size_t)n;
    if (memmem(seen, have, want, need)) return 0;
    /* Keep only a tail that could still start the wanted text. */
    if (have > need) {
      memmove(seen, seen + have - need, need);
      have = need;
    }
  }
}

int main(int argc, char **argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 100;
  int warmup = argc > 2 ? atoi(argv[2]) : 10;
  if (iterations < 1 || warmup < 0) return 2;
  int master;
  pid_t child = forkpty(&master, NULL, NULL, NULL);
  if (child < 0) return 1;
  if (child == 0) {
    execl("/bin/sh", "sh", "-c", "stty -echo; echo ready; exec cat", (char *)NULL);
    _exit(127);
  }
  double *samples = malloc(sizeof(double) * (size_t)iterations);
  int status = samples && read_until(master, "ready") == 0 ? 0 : 1;
  for (int i = 0; status == 0 && i < warmup + iterations; i++) {
    char line[64], echoed[64];
    int len = snprintf(line, sizeof line, "ping %d\n", i);
    snprintf(echoed, sizeof echoed, "ping %d\r\n", i);
    double start = now_us();
    if (write(master, line, (size_t)len) != len || read_until(master, echoed) != 0) status = 1;
    if (i >= warmup) samples[i - warmup] = now_us() - start;
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  if (status != 0) return status;
  print_samples(samples, iterations);
  return 0;
}
