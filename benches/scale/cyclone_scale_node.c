/*
 * The Cyclone DDS side of scripts/bench-scale: N participants in one process, each with
 * five writers and five readers of ShapeType (topics scale_0 .. scale_9: participant i
 * writes topics (i + j) % 10 and reads topics (i + j + 5) % 10, j = 0..4), reliable and
 * volatile; with --endpoints 0, participants alone.
 *
 *   cyclone_scale_node DOMAIN FIRST N TOTAL ENDPOINTS
 *
 * Prints "base_rss KB" and waits for a line on stdin before creating anything (the driver
 * measures the process meanwhile), then "created US" once everything exists and
 * "matched US" (microseconds since the Unix epoch) once every reader matched the TOTAL/2
 * writers of its topic and every writer the TOTAL/2 readers, then idles until stdin closes.
 * The driver measures memory, CPU and wake-ups from /proc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "dds/dds.h"
#include "ShapeType.h"

static long long now_us(void)
{
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (long long)tv.tv_sec * 1000000LL + tv.tv_usec;
}

static long rss_kb(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
      break;
  fclose(f);
  return kb;
}

int main(int argc, char **argv)
{
  if (argc != 6) {
    fprintf(stderr, "usage: %s DOMAIN FIRST N TOTAL ENDPOINTS\n", argv[0]);
    return 2;
  }
  int domain = atoi(argv[1]), first = atoi(argv[2]), n = atoi(argv[3]);
  int total = atoi(argv[4]), endpoints = atoi(argv[5]);
  int expected = total / 2;
  printf("base_rss %ld\n", rss_kb());
  fflush(stdout);
  /* The driver measures this process before anything is created, then says go. */
  char go[64];
  if (fgets(go, sizeof go, stdin) == NULL)
    return 1;
  dds_entity_t *writers = calloc((size_t)n * 5, sizeof *writers);
  dds_entity_t *readers = calloc((size_t)n * 5, sizeof *readers);
  dds_qos_t *qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_durability(qos, DDS_DURABILITY_VOLATILE);
  for (int p = 0; p < n; p++) {
    int i = first + p;
    dds_entity_t dp = dds_create_participant((dds_domainid_t)domain, NULL, NULL);
    if (dp < 0) {
      fprintf(stderr, "participant %d: %s\n", i, dds_strretcode(dp));
      return 1;
    }
    if (!endpoints)
      continue;
    for (int j = 0; j < 5; j++) {
      char name[32];
      snprintf(name, sizeof name, "scale_%d", (i + j) % 10);
      dds_entity_t t = dds_create_topic(dp, &ShapeType_desc, name, NULL, NULL);
      writers[p * 5 + j] = dds_create_writer(dp, t, qos, NULL);
      snprintf(name, sizeof name, "scale_%d", (i + j + 5) % 10);
      t = dds_create_topic(dp, &ShapeType_desc, name, NULL, NULL);
      readers[p * 5 + j] = dds_create_reader(dp, t, qos, NULL);
      if (writers[p * 5 + j] < 0 || readers[p * 5 + j] < 0) {
        fprintf(stderr, "endpoints of participant %d failed\n", i);
        return 1;
      }
    }
  }
  printf("created %lld\n", now_us());
  fflush(stdout);
  for (;;) {
    int done = 1;
    for (int k = 0; endpoints && k < n * 5 && done; k++) {
      dds_publication_matched_status_t w;
      dds_subscription_matched_status_t r;
      dds_get_publication_matched_status(writers[k], &w);
      dds_get_subscription_matched_status(readers[k], &r);
      if ((int)w.current_count < expected || (int)r.current_count < expected)
        done = 0;
    }
    if (done)
      break;
    dds_sleepfor(DDS_MSECS(5));
  }
  printf("matched %lld\n", now_us());
  fflush(stdout);
  /* Idle until the driver closes stdin. */
  char buf[64];
  while (read(0, buf, sizeof buf) > 0)
    ;
  return 0;
}
