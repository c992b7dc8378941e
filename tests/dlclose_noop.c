/*
 * dlclose_noop.c - a test-only LD_PRELOAD shim used under
 * --enable-sanitizers: dlclose() keeps the library mapped.
 *
 * Open MPI loads its components with dlopen and unloads them at
 * MPI_Finalize; LeakSanitizer, which runs after that, then cannot name the
 * module of allocations the components kept, so tests/lsan.supp cannot
 * suppress them by library and they would drown River's own reports.
 * Keeping every library mapped lets LSan name each frame, so only the
 * third-party libraries listed in tests/lsan.supp are excused.
 */
#include <dlfcn.h>

int dlclose(void *handle);

int dlclose(void *handle)
{
  (void)handle;
  return 0;
}
