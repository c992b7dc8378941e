/*
 * builtin.c - the table of River's built-in modules (doc/flowspec.md,
 * "Modules"), registered once, on the registry's first use. Each module
 * lives in its own file in this folder; this is the one place that
 * lists them.
 */
#include "modules.h"

void river__modules_builtin(void)
{
  river__module_gen();
  river__module_count();
  river__module_null();
  river__module_coll_read();
  river__module_coll_write();
  river__module_file_read();
  river__module_file_write();
  river__module_stdin();
  river__module_stdout();
  river__module_sort();
  river__module_merge();
  river__module_coll_merge();
  river__module_partition();
  river__module_filter();
  river__module_join();
}
