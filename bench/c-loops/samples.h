/*
 * What the C loops share: the clock they time with and the way they report what they timed.
 */
#ifndef SHELLWRIGHT_C_LOOP_SAMPLES_H
#define SHELLWRIGHT_C_LOOP_SAMPLES_H

#include <stdio.h>
#include <time.h>

/* Now on the monotonic clock, in microseconds. */
static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Prints {"samples":[µs, …]} on stdout: the line bench/c-loop.mjs reads. */
static void print_samples(const double *samples, int count) {
  printf("{\"samples\":[");
  for (int i = 0; i < count; i++) printf(i ? ",%.1f" : "%.1f", samples[i]);
  printf("]}\n");
}

#endif
