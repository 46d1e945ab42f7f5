/*
 * Running `/bin/true` without a runtime: posix_spawn(3) and waitpid(2) in a C loop, with
 * the attributes Shellwright's direct spawn passes (a session of its own, an empty signal mask,
 * SIGPIPE at its default). What is left is the kernel's process creation, the dynamic loader's
 * start-up of `true`, its exit and one wake-up of the waiting parent.
 *
 *   spawn-true ITERATIONS WARMUP   prints {"samples":[µs, …]}, the timed runs in order
 */
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "samples.h"

extern char **environ;

/* One run of /bin/true, as the direct spawn starts it; 0 when it ran and exited 0. */
static int run_true(void) {
  char *argv[] = {"/bin/true", NULL};
  posix_spawnattr_t attributes;
  sigset_t signals;
  pid_t pid;
  int status = -1;
  if (posix_spawnattr_init(&attributes) != 0) return -1;
  sigemptyset(&signals);
  posix_spawnattr_setsigmask(&attributes, &signals);
  sigaddset(&signals, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  int spawned = posix_spawn(&pid, "/bin/true", NULL, &attributes, argv, environ);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 200;
  int warmup = argc > 2 ? atoi(argv[2]) : 20;
  if (iterations < 1 || warmup < 0) return 2;
  double *samples = malloc(sizeof(double) * (size_t)iterations);
  if (!samples) return 1;
  for (int i = 0; i < warmup + iterations; i++) {
    double start = now_us();
    if (run_true() != 0) return 1;
    if (i >= warmup) samples[i - warmup] = now_us() - start;
  }
  print_samples(samples, iterations);
  return 0;
}
