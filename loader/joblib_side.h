/* joblib < 0.10 side files (internal API of loader/joblib_side.c). The pickle scanner records
 * every file an NDArrayWrapper / ZNDArrayWrapper names (validator/report.h, stg_side_file);
 * joblib.load opens each as os.path.join(os.path.dirname(joblib file), name): an
 * NDArrayWrapper's with np.load(allow_pickle=True) (a .npy whose object arrays are pickles, an
 * .npz, or any other bytes as a pickle), a ZNDArrayWrapper's as a ZF stream of raw array bytes.
 * docs/containers.md says how each is read here. */
#ifndef STG_LOADER_JOBLIB_SIDE_H
#define STG_LOADER_JOBLIB_SIDE_H

#include "../validator/report.h"
#include "stguard/stguard.h"

/* Scans one side file, by its resolved path (no links left), into sub (not finished):
 * stg_scan_side_file (loader/scan.h), handed in so that this module includes nothing of the
 * scan that calls it (no include cycle). */
typedef void (*stg_side_scan_fn)(const char *resolved, const stg_scan_options *opt,
                                 stg_report *sub);

/* Opens and scans the side files r recorded, next to joblib_path (the path as walked or given:
 * a link's folder, as joblib's os.path.dirname sees it). Each file must resolve inside
 * opt->root, or inside joblib_path's own folder when no root is set (else
 * joblib_side_file_escape, not opened); it is opened by its resolved path without following
 * links and read with the identity checks of stg_scan_file_into; its findings are merged into
 * r with `member` = the side file's name (offsets inside it). An absent file is
 * joblib_side_file_missing. A name recorded twice is scanned once. Side files named by the side
 * files themselves are dropped: np.load reads them with a plain unpickler, which opens none. */
void stg_joblib_side_scan(const char *joblib_path, const stg_scan_options *opt,
                          stg_side_scan_fn scan, stg_report *r);

/* For content with no folder (a buffer, standard input): every recorded side file is
 * joblib_side_file_unresolved (error): joblib.load of a file object resolves names against the
 * working directory, which a scan cannot know. */
void stg_joblib_side_unresolved(stg_report *r);

#endif
