/* Path strings of the loader (loader-internal): the one join, the folder and the base name of a
 * path. Paths here are NUL-terminated strings the caller or a walk made, never file bytes. */
#ifndef STG_LOADER_PATH_H
#define STG_LOADER_PATH_H

/* Last component of path (after the last '/'). */
const char *stg_path_base(const char *path);

/* Folder part of path as a new string (stg_mem_free): "." when it has none, "/" for a file in
 * the root; NULL when memory fails. */
char *stg_path_dir(const char *path);

/* dir + "/" + name as a new string (stg_mem_free), the slash left out when dir already ends
 * with one, and name alone when dir is empty: shards, ONNX external data, walked entries.
 * NULL when memory fails. */
char *stg_path_join(const char *dir, const char *name);

#endif
