/*
 * app.c - what the river command's applications share (app.h).
 */
#include "app.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_PREFIX "file:"

const char *app_file_path(const char *endpoint)
{
  size_t k = strlen(FILE_PREFIX);

  return strncmp(endpoint, FILE_PREFIX, k) == 0 ? endpoint + k : NULL;
}

int app_refuse_existing(const char *who, const char *out,
                        const river_pcoll_opts *opts)
{
  char path[4200];
  size_t len = 4096;
  struct stat st;
  int rc;

  if (app_file_path(out) != NULL) {
    rc = lstat(app_file_path(out), &st) == 0 ? RIVER_EEXIST : RIVER_SUCCESS;
    if (rc != RIVER_SUCCESS && cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "%s: %s exists (--force replaces it, if "
                "it is a regular file, once the new one is written)", who,
                app_file_path(out));
    return cli_agree(rc);
  }
  rc = river_pcoll_root(opts, path, &len);
  if (rc == RIVER_SUCCESS
      && snprintf(path + strlen(path), sizeof path - strlen(path),
                  "/%s" RIVER_PCOLL_META_SUFFIX, out)
             >= (int)(sizeof path - strlen(path)))
    rc = RIVER_EINVAL;
  if (rc == RIVER_SUCCESS && access(path, F_OK) == 0) {
    if (cli_rank() == 0)
      river_log(RIVER_LOG_ERROR, "%s: collection %s exists (--force "
                "replaces it once the new one is written)", who, out);
    rc = RIVER_EEXIST;
  }
  return cli_agree(rc);
}

int app_param(const char *who, char *buf, size_t len, const char *key,
              const char *value)
{
  if (snprintf(buf, len, "%s=%s", key, value) < (int)len)
    return 1;
  if (cli_rank() == 0)
    river_log(RIVER_LOG_ERROR, "%s: --%s is longer than %zu bytes", who, key,
              len - strlen(key) - 2);
  return 0;
}

int app_rate_param(const char *opt, const char *val, const char *key,
                   double *rate, char *buf, size_t len)
{
  uint64_t v = 0;
  int rc = RIVER_SUCCESS;

  if (val != NULL)
    rc = app_parse_u64(opt, val, 1024, UINT64_MAX >> 1, 1, &v);
  *rate = (double)v;
  snprintf(buf, len, "%s=%llu", key, (unsigned long long)v);
  return rc;
}
