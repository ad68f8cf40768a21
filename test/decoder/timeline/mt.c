#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i * 7; }
__attribute__((noinline)) void mid(int n) { for (int i = 0; i < n; i++) leaf(i); }
__attribute__((noinline)) void work(long n) { for (long i = 0; i < n; i++) mid(8); }
static long N = 1000;
static void *worker(void *arg) { (void)arg; pthread_setname_np(pthread_self(), "tl-worker"); work(N); return 0; }
int main(int argc, char **argv) {
  if (argc > 1) N = atol(argv[1]);
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, worker, 0);
  work(N);
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  printf("%lu\n", sink);
  return 0;
}
