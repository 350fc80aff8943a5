#include <stdint.h>

// bl_compact0 compacts every L0 file of the database behind the C API
// handle into the first non-empty level below L0 (db_bench's compact0). It
// sets *files to the number of files compacted (0 when there was nothing to
// do) and *to_level to that level (-1: no data below L0), and returns NULL,
// or an error malloc'ed with strdup.
char* bl_compact0(uintptr_t handle, int* files, int* to_level);
