/* checksum.c - placeholder, being written. */
#include "river_internal.h"
