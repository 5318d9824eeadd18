/* The tree walk behind `stguard scan` (rules in scan.h and docs/cli.md): turn command-line
 * paths into records in a deterministic order (sorted, depth first, with an explicit stack),
 * follow links only inside the root, report specials and skipped links, read every distinct file
 * once on worker threads and hand the records back in order. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../parser/mem.h"
#include "../dispatch/formats.h"
#include "../dispatch/sniff.h"
#include "../parser/sort.h"
#include "../validator/limits.h"
#include "digest.h"
#include "idmap.h"
#include "joblib_side.h"
#include "path.h"
#include "scan.h"
#include "seed.h"
#include "sibling.h"

/* ------------------------------------------------------------------------------ the walk */

/* A distinct file met by the walk (by identity), or standard input. */
typedef struct walk_file {
    char *open_path; /* what is opened: the walked path, or a link's resolved target */
    bool nofollow;
    bool is_stdin;
    bool linked;        /* some record reached it through a symbolic link */
    char blob_hex[65];  /* expected digest from a blob name, "" when none */
    uint64_t size_hint; /* st_size when it was walked (progress only) */
    bool counted;       /* its bytes are in bytes_done already (read under two name classes) */
} walk_file;

/* One scan: a file read under one name class (walk_record's note). */
typedef struct walk_target {
    size_t file;        /* index in files */
    char *hint;         /* display path of its first record: name hint and index path */
    const char *root;   /* its records' scan root (walk_record's root) */
    stg_report *report; /* set by a worker */
    stg_status status;  /* set with it: why report is NULL */
    bool done;
    bool cut; /* the walk's cancel stopped its read: no report, no record */
    /* The first target of the same file, name class and root in another folder, or SIZE_MAX.
     * When that one's result depends on no neighbour file, this target is not read: reuse. */
    size_t leader;
    bool reuse;         /* its records take targets[leader].report */
    uint64_t live;      /* bytes read so far while it is scanned (atomic; progress only) */
    size_t last_record; /* report is freed after this record is handed out */
} walk_target;

/* Records of one file share a target (one read, one report) only when their names say the same
 * to the format rules (stg_name_hint_of), lie in the same folder when the file's result depends
 * on its neighbours (an index's shards, joblib side files, ONNX external data) and share a scan
 * root: every record is judged under its own name, so a path gets the same verdict however it
 * is reached. */
typedef struct walk_record {
    char *display;
    char *blob;          /* resolved target shown for links, NULL */
    size_t file;         /* index in files, when fixed is NULL */
    size_t target;       /* index in targets, set by settle_records */
    const char *root;    /* scan root of its side files, external data and shards (owned by
                            the walk's roots); NULL: the caller's opt->scan.root */
    stg_report *fixed;   /* a report made during the walk (skipped links, specials, errors) */
    bool hf_blob_direct; /* a file walked directly inside a Hugging Face `blobs` folder */
    bool hf_incomplete;  /* ... named `<blob>.incomplete`: a download that did not finish */
    bool suppressed;     /* not handed out: its blob is reported under a link's path */
    size_t family;       /* settle_records: first record of its file, name class and root */
} walk_record;

typedef struct dir_frame {
    char *path; /* display path */
    char *rel;  /* relative to the argument ("" for the argument itself) */
    char **names;
    size_t count, next;
    uint64_t dev, ino;
    bool hf_repo; /* the folder is a Hugging Face repo folder (models--ORG--NAME, ...) */
    bool hf_hub;  /* the folder holds repo folders: a Hugging Face hub root */
} dir_frame;

typedef struct walk {
    const stg_walk_options *opt;
    walk_file *files;
    size_t file_count, file_cap;
    walk_target *targets;
    size_t target_count, target_cap;
    walk_record *records;
    size_t record_count, record_cap;
    stg_idmap file_ids;  /* file identity -> file (loader/idmap.h: bounded worst case) */
    stg_idmap dirs_seen; /* directories walked for the current argument */
    dir_frame *stack;
    size_t depth, stack_cap;
    /* the current argument */
    const char *root_display; /* Hugging Face repo folder as given, or the argument */
    size_t root_display_len;
    char root_real[PATH_MAX];
    bool root_is_hf;
    const char *scan_root; /* what its records scan under (walk_record's root) */
    char **roots;          /* every argument's scan_root, freed with the walk */
    size_t root_count, root_cap;
    bool stdin_seen;
    bool nomem;
    uint64_t skipped_git, skipped_no_exist, skipped_locks, skipped_incomplete;
    /* worker state */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    size_t next_job;
    uint64_t bytes_done;
    uint64_t distinct;
    uint64_t skipped_self;
    stg_sibling_cache *siblings; /* folder listings of the sibling step (NULL: none kept) */
} walk;

static char *dup_str(walk *w, const char *s)
{
    char *d = stg_mem_strndup(s, strlen(s));
    if (d == NULL) {
        w->nomem = true;
    }
    return d;
}

static char *join_path(walk *w, const char *dir, const char *name)
{
    char *p = stg_path_join(dir, name);
    if (p == NULL) {
        w->nomem = true;
    }
    return p;
}

static walk_record *new_record(walk *w, const char *display)
{
    if (w->record_count == w->record_cap) {
        size_t ncap = w->record_cap == 0 ? 64 : w->record_cap * 2;
        walk_record *nr = stg_mem_realloc(w->records, ncap * sizeof *nr);
        if (nr == NULL) {
            w->nomem = true;
            return NULL;
        }
        w->records = nr;
        w->record_cap = ncap;
    }
    char *d = dup_str(w, display);
    if (d == NULL) {
        return NULL;
    }
    walk_record *rec = &w->records[w->record_count++];
    memset(rec, 0, sizeof *rec);
    rec->display = d;
    return rec;
}

static void add_fixed(walk *w, const char *display, stg_code code, stg_severity sev,
                      const char *message)
{
    walk_record *rec = new_record(w, display);
    if (rec == NULL) {
        return;
    }
    rec->fixed = stg_scan_fixed_report(&w->opt->scan.limits, code, sev, message);
    if (rec->fixed == NULL) {
        w->nomem = true;
    }
}

/* A path the walk did not read. Named on the command line, it is verdict error (scan_error): a
 * gate that was asked about that path must not pass it unread; met inside a tree, a warning. */
static void add_unread(walk *w, const char *display, stg_code code, bool argument,
                       const char *message)
{
    add_fixed(w, display, code, argument ? STG_SEV_ERROR : STG_SEV_WARNING, message);
    if (argument && !w->nomem) {
        w->records[w->record_count - 1].fixed->scan_error = true;
    }
}

static void add_fixed_errno(walk *w, const char *display, const char *what, int err)
{
    walk_record *rec = new_record(w, display);
    if (rec == NULL) {
        return;
    }
    rec->fixed = stg_report_new(&w->opt->scan.limits);
    if (rec->fixed == NULL) {
        w->nomem = true;
        return;
    }
    stg_scan_add_errno(rec->fixed, STG_IO_ERROR, what, err);
    stg_report_finish(rec->fixed);
}

/* The file for an identity, created on first sight. */
static size_t file_for(walk *w, const struct stat *st, const char *open_path, bool nofollow)
{
    size_t idx;
    if (stg_idmap_find(&w->file_ids, (uint64_t)st->st_dev, (uint64_t)st->st_ino, &idx)) {
        return idx;
    }
    if (w->file_count == w->file_cap) {
        size_t ncap = w->file_cap == 0 ? 64 : w->file_cap * 2;
        walk_file *nf = stg_mem_realloc(w->files, ncap * sizeof *nf);
        if (nf == NULL) {
            w->nomem = true;
            return SIZE_MAX;
        }
        w->files = nf;
        w->file_cap = ncap;
    }
    idx = w->file_count;
    walk_file *f = &w->files[idx];
    memset(f, 0, sizeof *f);
    f->open_path = dup_str(w, open_path);
    if (f->open_path == NULL) {
        return SIZE_MAX;
    }
    f->nofollow = nofollow;
    f->size_hint = S_ISREG(st->st_mode) && st->st_size > 0 ? (uint64_t)st->st_size : 0;
    if (w->opt->hf_cache && stg_path_is_blob(open_path)) {
        const char *base = stg_path_base(open_path); /* 40 or 64 hex digits */
        memcpy(f->blob_hex, base, strlen(base) + 1);
    }
    /* A full table (crafted inode numbers, idmap.h) leaves this identity unrecorded: a later
     * path to the same file gets a file of its own and is scanned again under its own name,
     * which is what two distinct files get. Nothing goes unscanned. */
    if ((st->st_dev != 0 || st->st_ino != 0) &&
        stg_idmap_put(&w->file_ids, (uint64_t)st->st_dev, (uint64_t)st->st_ino, idx) ==
            STG_IDMAP_NOMEM) {
        stg_mem_free(f->open_path);
        w->nomem = true;
        return SIZE_MAX;
    }
    w->file_count++;
    return idx;
}

/* true when the folder being listed (a `blobs` folder) lies in a Hugging Face repo folder: the
 * walk started above it (a hub root, or the folder holding the hub). */
static bool in_hf_repo(const walk *w)
{
    return w->depth >= 2 && w->stack[w->depth - 2].hf_repo;
}

static void add_file(walk *w, const char *display, const struct stat *st, const char *open_path,
                     bool nofollow, const char *blob, bool linked, bool argument)
{
    if (w->opt->skip_set && (uint64_t)st->st_dev == w->opt->skip_dev &&
        (uint64_t)st->st_ino == w->opt->skip_ino) {
        w->skipped_self++; /* the caller's own output file: never a record */
        return;
    }
    size_t file = file_for(w, st, open_path, nofollow);
    if (file == SIZE_MAX) {
        return;
    }
    walk_record *rec = new_record(w, display);
    if (rec == NULL) {
        return;
    }
    rec->file = file;
    rec->root = w->scan_root;
    if (blob != NULL) {
        rec->blob = dup_str(w, blob);
    }
    if (linked) {
        w->files[file].linked = true;
    }
    bool in_cache = w->root_is_hf || in_hf_repo(w);
    rec->hf_blob_direct = !linked && stg_path_is_blob(display) && in_cache;
    if (!linked && !argument && in_cache && stg_path_is_incomplete_blob(display)) {
        rec->hf_blob_direct = true;
        rec->hf_incomplete = true;
    }
}

static bool glob_any(const char *const *globs, size_t n, const char *rel, const char *base)
{
    for (size_t i = 0; i < n; i++) {
        if (fnmatch(globs[i], rel, 0) == 0 || fnmatch(globs[i], base, 0) == 0) {
            return true;
        }
    }
    return false;
}

static bool file_selected(const walk *w, const char *rel, const char *base)
{
    const stg_walk_options *o = w->opt;
    if (o->include_count > 0 && !glob_any(o->include, o->include_count, rel, base)) {
        return false;
    }
    return !glob_any(o->exclude, o->exclude_count, rel, base);
}

static bool dir_selected(const walk *w, const char *rel, const char *base)
{
    return !glob_any(w->opt->exclude, w->opt->exclude_count, rel, base);
}

static int cmp_names(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void free_frame(dir_frame *f)
{
    for (size_t i = 0; i < f->count; i++) {
        stg_mem_free(f->names[i]);
    }
    stg_mem_free(f->names);
    stg_mem_free(f->path);
    stg_mem_free(f->rel);
    memset(f, 0, sizeof *f);
}

/* huggingface_hub names a repo's cache folder `<type>s--ORG--NAME` (repo_folder_name). Returns
 * the length of the type prefix when name is such a folder name, else 0. */
static size_t hf_repo_prefix(const char *name, size_t len)
{
    static const char *const prefixes[] = {"models--", "datasets--", "spaces--"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t k = strlen(prefixes[i]);
        if (len > k && memcmp(name, prefixes[i], k) == 0) {
            return k;
        }
    }
    return 0;
}

static bool is_hf_repo_name(const char *name)
{
    return hf_repo_prefix(name, strlen(name)) > 0;
}

/* Lists a directory (sorted) onto the stack; an unreadable one becomes an io_error record. */
static void push_dir(walk *w, const char *display, const char *rel, const struct stat *st)
{
    stg_idmap_result put = stg_idmap_put(&w->dirs_seen, (uint64_t)st->st_dev, (uint64_t)st->st_ino,
                                         w->depth);
    if (put == STG_IDMAP_NOMEM) {
        w->nomem = true;
        return;
    }
    if (put == STG_IDMAP_FULL) {
        /* Unrecorded, links to it could walk it again and again: not walked, fails closed. */
        add_fixed(w, display, STG_LIMIT_EXCEEDED, STG_SEV_ERROR,
                  "the walk's table of directories is full (inode numbers crafted to collide): "
                  "not walked");
        return;
    }
    DIR *d = opendir(display);
    if (d == NULL) {
        add_fixed_errno(w, display, "the directory could not be read", errno);
        return;
    }
    dir_frame f;
    memset(&f, 0, sizeof f);
    f.dev = (uint64_t)st->st_dev;
    f.ino = (uint64_t)st->st_ino;
    size_t cap = 0;
    bool failed = false;
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (e == NULL) {
            if (errno != 0) {
                add_fixed_errno(w, display, "the directory could not be read completely", errno);
            }
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        if (f.count == cap) {
            size_t ncap = cap == 0 ? 32 : cap * 2;
            char **nn = stg_mem_realloc(f.names, ncap * sizeof *nn);
            if (nn == NULL) {
                failed = true;
                break;
            }
            f.names = nn;
            cap = ncap;
        }
        char *name = stg_mem_strndup(e->d_name, strlen(e->d_name));
        if (name == NULL) {
            failed = true;
            break;
        }
        f.names[f.count++] = name;
    }
    closedir(d);
    f.path = stg_mem_strndup(display, strlen(display));
    f.rel = stg_mem_strndup(rel, strlen(rel));
    if (f.path == NULL || f.rel == NULL) {
        failed = true;
    }
    if (w->depth == w->stack_cap && !failed) {
        size_t ncap = w->stack_cap == 0 ? 16 : w->stack_cap * 2;
        dir_frame *ns = stg_mem_realloc(w->stack, ncap * sizeof *ns);
        if (ns == NULL) {
            failed = true;
        } else {
            w->stack = ns;
            w->stack_cap = ncap;
        }
    }
    if (failed) {
        free_frame(&f);
        w->nomem = true;
        return;
    }
    if (f.count > 1) {
        stg_sort(f.names, f.count, sizeof *f.names, cmp_names, NULL); /* names are distinct */
    }
    f.hf_repo = w->opt->hf_cache && is_hf_repo_name(stg_path_base(display));
    for (size_t i = 0; i < f.count && w->opt->hf_cache && !f.hf_hub; i++) {
        f.hf_hub = is_hf_repo_name(f.names[i]);
    }
    w->stack[w->depth++] = f;
}

/* true when (dev, ino) is a directory on the current walk path (a link to it is a cycle). */
static bool is_ancestor(const walk *w, const struct stat *st)
{
    for (size_t i = 0; i < w->depth; i++) {
        if (w->stack[i].dev == (uint64_t)st->st_dev && w->stack[i].ino == (uint64_t)st->st_ino) {
            return true;
        }
    }
    return false;
}

/* Shown form of a resolved path inside the root (the caller checked stg_path_inside): the root
 * as given + the part below it; the resolved path itself when it is the root (an argument that
 * is a link to a file). */
static char *blob_display(walk *w, const char *resolved)
{
    size_t n = strlen(w->root_real);
    if (strcmp(w->root_real, "/") == 0) {
        n = 0;
    }
    if (resolved[n] == '\0') {
        return dup_str(w, resolved);
    }
    char *rootd = stg_mem_strndup(w->root_display, w->root_display_len);
    if (rootd == NULL) {
        w->nomem = true;
        return NULL;
    }
    char *p = join_path(w, rootd, resolved + n + 1);
    stg_mem_free(rootd);
    return p;
}

static void visit_dir(walk *w, const char *display, const char *rel, const struct stat *st,
                      bool via_link)
{
    size_t seen;
    if (stg_idmap_find(&w->dirs_seen, (uint64_t)st->st_dev, (uint64_t)st->st_ino, &seen)) {
        add_fixed(w, display, STG_SYMLINK_SKIPPED, STG_SEV_WARNING,
                  is_ancestor(w, st)
                      ? "the link leads to a directory that contains it (a cycle): not followed"
                      : (via_link ? "the link leads to a directory already walked: not followed"
                                  : "the directory was already walked through a link: "
                                    "skipped"));
        return;
    }
    push_dir(w, display, rel, st);
}

/* Folders met inside a tree that hold no content to check; counted, not reported (scan.h):
 * `.git` (unless scan_git), and in a Hugging Face cache `.no_exist` (empty markers of files the
 * Hub does not have) in a repo folder and `.locks` in a repo folder or the hub root. */
static bool skip_dir(walk *w, const char *base)
{
    const dir_frame *parent = w->depth > 0 ? &w->stack[w->depth - 1] : NULL;
    if (strcmp(base, ".git") == 0 && !w->opt->scan_git) {
        w->skipped_git++;
        return true;
    }
    if (parent != NULL && parent->hf_repo && strcmp(base, ".no_exist") == 0) {
        w->skipped_no_exist++;
        return true;
    }
    if (parent != NULL && (parent->hf_repo || parent->hf_hub) && strcmp(base, ".locks") == 0) {
        w->skipped_locks++;
        return true;
    }
    return false;
}

/* One path met by the walk (argument: a command-line path, never filtered). */
static void visit(walk *w, const char *display, const char *rel, bool argument)
{
    const char *base = stg_path_base(display);
    struct stat lst, st;
    if (lstat(display, &lst) != 0) {
        if (argument || file_selected(w, rel, base)) {
            add_fixed_errno(w, display, "the path could not be read", errno);
        }
        return;
    }
    if (S_ISLNK(lst.st_mode) && !argument && !w->opt->follow_links) {
        /* not resolved at all: filtered by its own name, as a file */
        if (file_selected(w, rel, base)) {
            add_fixed(w, display, STG_SYMLINK_SKIPPED, STG_SEV_WARNING,
                      "links are not followed (follow_links is off)");
        }
        return;
    }
    if (S_ISLNK(lst.st_mode)) {
        char resolved[PATH_MAX];
        if (realpath(display, resolved) == NULL || stat(resolved, &st) != 0) {
            int err = errno;
            if (!argument && !file_selected(w, rel, base)) {
                return;
            }
            if (err == ELOOP) {
                add_unread(w, display, STG_SYMLINK_SKIPPED, argument,
                           "the link is part of a cycle of links: not followed");
            } else {
                add_fixed_errno(w, display, "the link's target could not be resolved", err);
            }
            return;
        }
        bool is_dir = S_ISDIR(st.st_mode);
        if (!argument && !(is_dir ? dir_selected(w, rel, base) : file_selected(w, rel, base))) {
            return;
        }
        if (!stg_path_inside(resolved, w->root_real)) {
            add_fixed(w, display, STG_SYMLINK_SKIPPED, STG_SEV_WARNING,
                      "the link leads outside the scan root: not followed");
            return;
        }
        if (is_dir) {
            if (!argument && skip_dir(w, base)) {
                return; /* a link named .git (or .no_exist, .locks) is skipped as the folder is */
            }
            visit_dir(w, display, rel, &st, true);
        } else if (S_ISREG(st.st_mode)) {
            char *blob = blob_display(w, resolved);
            if (blob != NULL) {
                add_file(w, display, &st, resolved, true, blob, true, argument);
                stg_mem_free(blob);
            }
        } else {
            add_unread(w, display, STG_NOT_REGULAR_FILE, argument,
                       "the link leads to a FIFO, device or socket: not opened");
        }
        return;
    }
    if (S_ISDIR(lst.st_mode)) {
        if (!argument && skip_dir(w, base)) {
            return;
        }
        if (argument || dir_selected(w, rel, base)) {
            visit_dir(w, display, rel, &lst, false);
        }
        return;
    }
    if (!argument && !file_selected(w, rel, base)) {
        return;
    }
    if (S_ISREG(lst.st_mode)) {
        add_file(w, display, &lst, display, true, NULL, false, argument);
    } else {
        add_unread(w, display, STG_NOT_REGULAR_FILE, argument,
                   "not a regular file (FIFO, device or socket): not opened");
    }
}

/* Length of path up to and including its last repo folder component (`models--*`,
 * `datasets--*`, `spaces--*`); 0 when none. */
static size_t hf_prefix_len(const char *path)
{
    size_t found = 0;
    const char *p = path;
    while (*p != '\0') {
        const char *start = p;
        while (*p != '\0' && *p != '/') {
            p++;
        }
        if (hf_repo_prefix(start, (size_t)(p - start)) > 0) {
            found = (size_t)(p - path);
        }
        while (*p == '/') {
            p++;
        }
    }
    return found;
}

/* The scan root of an argument's records: the root links are followed in (root_real) when it is
 * a folder, so joblib side files, ONNX external data and shards reached through links stay
 * inside the same root (a Hugging Face snapshot's links lead to the repo folder's blobs/). NULL
 * for a file named alone (they stay in its own folder) or when the caller set a root. */
static void set_scan_root(walk *w)
{
    w->scan_root = NULL;
    struct stat st;
    if (w->opt->scan.root != NULL || stat(w->root_real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return;
    }
    if (w->root_count == w->root_cap) {
        size_t ncap = w->root_cap == 0 ? 8 : w->root_cap * 2;
        char **nr = stg_mem_realloc(w->roots, ncap * sizeof *nr);
        if (nr == NULL) {
            w->nomem = true;
            return;
        }
        w->roots = nr;
        w->root_cap = ncap;
    }
    char *root = dup_str(w, w->root_real);
    if (root != NULL) {
        w->roots[w->root_count++] = root;
        w->scan_root = root;
    }
}

/* Root of an argument: its `models--ORG--NAME` ancestor in a Hugging Face cache (found in the
 * path as given, else in its real path, so `scan .` inside a snapshot works), else the argument.
 * Sets root_display/root_real; false (with a record) when unresolvable. */
static bool set_root(walk *w, const char *arg)
{
    size_t hf = w->opt->hf_cache ? hf_prefix_len(arg) : 0;
    w->root_is_hf = hf > 0;
    w->root_display = arg;
    w->root_display_len = hf > 0 ? hf : strlen(arg);
    char tmp[PATH_MAX];
    if (w->root_display_len >= sizeof tmp) {
        add_fixed(w, arg, STG_IO_ERROR, STG_SEV_ERROR, "the path is too long");
        return false;
    }
    memcpy(tmp, arg, w->root_display_len);
    tmp[w->root_display_len] = '\0';
    if (realpath(tmp, w->root_real) == NULL) {
        add_fixed_errno(w, arg, "the path could not be read", errno);
        return false;
    }
    if (!w->root_is_hf && w->opt->hf_cache) {
        hf = hf_prefix_len(w->root_real);
        if (hf > 0) {
            /* The cache is only visible in the real path: show blobs by their real paths. */
            w->root_is_hf = true;
            w->root_real[hf] = '\0';
            w->root_display = w->root_real;
            w->root_display_len = hf;
        }
    }
    set_scan_root(w);
    return true;
}

/* An empty file under a Hugging Face repo folder's `.no_exist` (by its real path): a marker
 * huggingface_hub writes for a file the Hub lacks, which nothing loads. Named as an argument
 * (find ... | stguard scan --files-from -) it is skipped and counted like the folder; a file
 * there with content is scanned (whoever names it may load it). */
static bool is_no_exist_marker(const char *arg)
{
    struct stat st;
    char real[PATH_MAX];
    if (stat(arg, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0 ||
        realpath(arg, real) == NULL) {
        return false;
    }
    const char *prev = NULL;
    char *save = NULL;
    for (char *part = strtok_r(real, "/", &save); part != NULL; part = strtok_r(NULL, "/", &save)) {
        if (prev != NULL && strcmp(part, ".no_exist") == 0 &&
            (strncmp(prev, "models--", 8) == 0 || strncmp(prev, "datasets--", 10) == 0 ||
             strncmp(prev, "spaces--", 8) == 0)) {
            return true;
        }
        prev = part;
    }
    return false;
}

static void walk_argument(walk *w, const char *arg)
{
    if (w->opt->hf_cache && is_no_exist_marker(arg)) {
        w->skipped_no_exist++;
        return;
    }
    stg_idmap_free(&w->dirs_seen);
    if (!set_root(w, arg)) {
        return;
    }
    visit(w, arg, "", true);
    while (w->depth > 0 && !w->nomem) {
        dir_frame *f = &w->stack[w->depth - 1];
        if (f->next == f->count) {
            free_frame(f);
            w->depth--;
            continue;
        }
        const char *name = f->names[f->next++];
        char *child = join_path(w, f->path, name);
        char *rel = f->rel[0] == '\0' ? dup_str(w, name) : join_path(w, f->rel, name);
        if (child != NULL && rel != NULL) {
            visit(w, child, rel, false); /* may push: f is not used after this */
        }
        stg_mem_free(child);
        stg_mem_free(rel);
    }
    while (w->depth > 0) {
        free_frame(&w->stack[--w->depth]);
    }
}

static void add_stdin(walk *w)
{
    const char *display = w->opt->stdin_name != NULL ? w->opt->stdin_name : "-";
    struct stat none;
    memset(&none, 0, sizeof none);
    size_t file = file_for(w, &none, "-", false);
    if (file == SIZE_MAX) {
        return;
    }
    w->files[file].is_stdin = true;
    w->files[file].blob_hex[0] = '\0';
    walk_record *rec = new_record(w, display);
    if (rec != NULL) {
        rec->file = file;
    }
}

/* ------------------------------------------------------------------------------ workers */

static bool cancelled(const stg_walk_options *opt)
{
    return opt->cancel != NULL && *opt->cancel != 0;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static stg_report *scan_target(walk *w, walk_target *t, uint64_t *bytes, stg_status *status)
{
    stg_scan_options rooted = w->opt->scan;
    if (t->root != NULL) {
        rooted.root = t->root;
    }
    const stg_scan_options *opt = &rooted;
    const walk_file *f = &w->files[t->file];
    *bytes = 0;
    if (f->is_stdin) {
        stg_report *r = NULL;
        const char *hint = w->opt->stdin_name;
        *status = stg_scan_fd_cancellable(w->opt->stdin_fd, hint != NULL ? hint : "-", hint, opt,
                                          w->opt->cancel, &t->cut, &r);
        if (*status != STG_OK || t->cut) {
            return NULL;
        }
        *bytes = stg_report_size(r);
        return r;
    }
    stg_report *r = stg_report_new(&opt->limits);
    if (r == NULL) {
        *status = STG_E_NOMEM;
        return NULL;
    }
    *status = STG_OK;
    /* The shown path is the name hint and, for an index, where its shards are looked up: it
     * is a walked path (file or link), so the shards' links next to it are found. */
    if (!stg_scan_file_into(f->open_path, t->hint != NULL ? t->hint : f->open_path, f->nofollow,
                            f->blob_hex[0] != '\0' ? f->blob_hex : NULL, opt, r, bytes, &t->live,
                            w->opt->cancel)) {
        stg_report_free(r); /* cut by the cancel: half a read is no verdict */
        t->cut = true;
        return NULL;
    }
    /* joblib side files are looked up next to the shown path, as joblib.load does; so are the
     * models that name a data file (loader/sibling.h) */
    stg_joblib_side_scan(t->hint != NULL ? t->hint : f->open_path, opt, stg_scan_side_file, r);
    stg_sibling_scan(t->hint != NULL ? t->hint : f->open_path, opt, w->siblings, r);
    stg_report_finish(r);
    return r;
}

/* Under w->lock: waits for target i's leader (handed out before i, so running or done) and
 * says whether its report stands for i too: the same bytes under the same name class, and a
 * result that looked at no file next to it. */
static bool follows_leader(walk *w, size_t i)
{
    size_t l = w->targets[i].leader;
    if (l == SIZE_MAX) {
        return false;
    }
    while (!w->targets[l].done) {
        pthread_cond_wait(&w->changed, &w->lock);
    }
    const stg_report *lr = w->targets[l].report;
    return lr != NULL && !w->targets[l].cut && !lr->neighbours;
}

static void *worker_main(void *arg)
{
    walk *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        size_t i = w->next_job;
        if (i >= w->target_count) {
            pthread_mutex_unlock(&w->lock);
            return NULL;
        }
        if (cancelled(w->opt)) {
            w->next_job = w->target_count; /* interrupted: no file is started any more */
            pthread_mutex_unlock(&w->lock);
            return NULL;
        }
        w->next_job++;
        if (follows_leader(w, i)) {
            w->targets[i].reuse = true;
            w->targets[i].done = true;
            pthread_cond_broadcast(&w->changed);
            pthread_mutex_unlock(&w->lock);
            continue;
        }
        pthread_mutex_unlock(&w->lock);
        uint64_t bytes = 0;
        stg_status st = STG_OK;
        stg_report *r = scan_target(w, &w->targets[i], &bytes, &st);
        pthread_mutex_lock(&w->lock);
        w->targets[i].report = r;
        w->targets[i].status = st;
        w->targets[i].done = true;
        /* bytes counts what is on disk: a blob judged under two name classes counts once */
        if (!w->targets[i].cut && !w->files[w->targets[i].file].counted) {
            w->files[w->targets[i].file].counted = true;
            w->bytes_done += bytes;
        }
        w->distinct += w->targets[i].cut ? 0 : 1;
        pthread_cond_broadcast(&w->changed);
        pthread_mutex_unlock(&w->lock);
    }
}

/* No job is handed out any more; the scans running end (a read stops at the cancel) and the
 * workers are joined. */
static void stop_workers(walk *w, pthread_t *tids, unsigned *started)
{
    pthread_mutex_lock(&w->lock);
    w->next_job = w->target_count;
    pthread_mutex_unlock(&w->lock);
    for (unsigned i = 0; i < *started; i++) {
        pthread_join(tids[i], NULL);
    }
    *started = 0;
}

static void wait_deadline(struct timespec *ts, uint32_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)(ms / 1000);
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static void free_walk(walk *w)
{
    for (size_t i = 0; i < w->record_count; i++) {
        stg_mem_free(w->records[i].display);
        stg_mem_free(w->records[i].blob);
        stg_report_free(w->records[i].fixed);
    }
    for (size_t i = 0; i < w->file_count; i++) {
        stg_mem_free(w->files[i].open_path);
    }
    for (size_t i = 0; i < w->target_count; i++) {
        stg_mem_free(w->targets[i].hint);
        stg_report_free(w->targets[i].report);
    }
    /* walk_argument pops every frame it pushed before it returns: the stack is empty here */
    for (size_t i = 0; i < w->root_count; i++) {
        stg_mem_free(w->roots[i]);
    }
    stg_mem_free(w->roots);
    stg_mem_free(w->stack);
    stg_mem_free(w->records);
    stg_mem_free(w->targets);
    stg_mem_free(w->files);
    stg_idmap_free(&w->file_ids);
    stg_idmap_free(&w->dirs_seen);
    stg_sibling_cache_free(w->siblings);
}

void stg_walk_options_default(stg_walk_options *out)
{
    memset(out, 0, sizeof *out);
    stg_scan_options_default(&out->scan);
    out->threads = 1;
    out->stdin_fd = 0;
    out->progress_ms = 250;
    out->follow_links = true;
    out->hf_cache = true;
}

/* Sort key of a shown file record: records with equal keys share one target. */
typedef struct share_key {
    size_t file;
    stg_name_hint hint;
    const char *dir; /* the display's folder for an index (shards are found there), else "" */
    size_t dir_len;
    const char *root; /* the record's scan root (NULL sorts first) */
    size_t record;
} share_key;

static int cmp_roots(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return a == b ? 0 : (a == NULL ? -1 : 1);
    }
    return strcmp(a, b);
}

static int cmp_share_keys(const void *pa, const void *pb, void *ctx)
{
    (void)ctx;
    const share_key *a = pa, *b = pb;
    if (a->file != b->file) {
        return a->file < b->file ? -1 : 1;
    }
    int c = memcmp(&a->hint, &b->hint, sizeof a->hint);
    if (c == 0) {
        c = cmp_roots(a->root, b->root);
    }
    if (c == 0 && a->dir_len != b->dir_len) {
        c = a->dir_len < b->dir_len ? -1 : 1;
    }
    if (c == 0) {
        c = memcmp(a->dir, b->dir, a->dir_len);
    }
    if (c == 0 && a->record != b->record) {
        c = a->record < b->record ? -1 : 1;
    }
    return c;
}

static bool reads_neighbours(const stg_name_hint *h)
{
    const stg_format_entry *e = stg_name_hint_decides(h);
    return e != NULL && e->neighbours;
}

/* The same bytes under the same name class and root, in any folder. An index always reads its
 * shards next to it: its folders never share. */
static bool same_family(const share_key *a, const share_key *b)
{
    return a->file == b->file && memcmp(&a->hint, &b->hint, sizeof a->hint) == 0 &&
           cmp_roots(a->root, b->root) == 0 && !reads_neighbours(&a->hint);
}

static bool same_share(const share_key *a, const share_key *b)
{
    return a->file == b->file && memcmp(&a->hint, &b->hint, sizeof a->hint) == 0 &&
           a->dir_len == b->dir_len && memcmp(a->dir, b->dir, a->dir_len) == 0 &&
           cmp_roots(a->root, b->root) == 0;
}

static size_t new_target(walk *w, size_t file, const char *hint, const char *root)
{
    if (w->target_count == w->target_cap) {
        size_t ncap = w->target_cap == 0 ? 64 : w->target_cap * 2;
        walk_target *nt = stg_mem_realloc(w->targets, ncap * sizeof *nt);
        if (nt == NULL) {
            w->nomem = true;
            return SIZE_MAX;
        }
        w->targets = nt;
        w->target_cap = ncap;
    }
    walk_target *t = &w->targets[w->target_count];
    memset(t, 0, sizeof *t);
    t->leader = SIZE_MAX;
    t->file = file;
    t->root = root;
    if (!w->files[file].is_stdin) {
        t->hint = dup_str(w, hint);
        if (t->hint == NULL) {
            return SIZE_MAX;
        }
    }
    return w->target_count++;
}

/* Hugging Face: a blob some link leads to is shown only under the link's path. Then the shown
 * file records are grouped (share_key, sorted: O(n log n) whatever the names) and each group
 * gets one target, numbered in walk order so that workers read files in the order their
 * records are handed out; its name hint is the group's first record's path, and its report is
 * freed after its last record. Returns the number of records shown. */
static bool in_shard(const stg_walk_options *opt, const char *path)
{
    if (opt->shard_count == 0) {
        return true;
    }
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++) {
        h = (h ^ *p) * 0x100000001b3ull;
    }
    return h % opt->shard_count == opt->shard_index;
}

static size_t settle_records(walk *w)
{
    size_t shown = 0, files = 0;
    for (size_t i = 0; i < w->record_count; i++) {
        walk_record *rec = &w->records[i];
        if (rec->fixed == NULL && rec->hf_blob_direct && w->files[rec->file].linked) {
            rec->suppressed = true;
        } else if (rec->fixed == NULL && rec->hf_incomplete) {
            /* A partial download no snapshot links to: nothing loads it. Counted, not read. */
            rec->suppressed = true;
            w->skipped_incomplete++;
        }
        if (!in_shard(w->opt, rec->display)) {
            rec->suppressed = true; /* another shard's: no target, never read */
        }
        if (!rec->suppressed) {
            shown++;
            files += rec->fixed == NULL ? 1 : 0;
        }
    }
    share_key *keys = files > 0 ? stg_mem_calloc(files, sizeof *keys) : NULL;
    if (files > 0 && keys == NULL) {
        w->nomem = true;
        return 0;
    }
    size_t k = 0;
    for (size_t i = 0; i < w->record_count; i++) {
        walk_record *rec = &w->records[i];
        if (rec->suppressed || rec->fixed != NULL) {
            continue;
        }
        share_key *key = &keys[k++];
        key->file = rec->file;
        key->hint = stg_name_hint_of(rec->display);
        key->dir = "";
        /* An index finds its shards, a pickle its joblib side files, next to the shown path:
         * only paths in the same folder share a result (safetensors name no other file). */
        const stg_format_entry *decided = stg_name_hint_decides(&key->hint);
        if (decided == NULL || !decided->alone) {
            key->dir = rec->display;
            key->dir_len = (size_t)(stg_path_base(rec->display) - rec->display);
        }
        key->root = rec->root;
        key->record = i;
    }
    if (files > 1) {
        stg_sort(keys, files, sizeof *keys, cmp_share_keys, NULL); /* total: record last */
    }
    /* The group of each record: its first key's record number, stored in rec->target; its
     * family (same_family: the groups of one file in several folders): the family's lowest
     * record number, in rec->family (the family's first target is made from it). */
    size_t *fam_start = files > 0 ? stg_mem_calloc(files, sizeof *fam_start) : NULL;
    if (files > 0 && fam_start == NULL) {
        stg_mem_free(keys);
        w->nomem = true;
        return 0;
    }
    for (size_t g = 0; g < files; g++) {
        size_t leader = g > 0 && same_share(&keys[g - 1], &keys[g])
                            ? w->records[keys[g - 1].record].target
                            : keys[g].record;
        w->records[keys[g].record].target = leader;
        fam_start[g] = g > 0 && same_family(&keys[g - 1], &keys[g]) ? fam_start[g - 1] : g;
    }
    /* keys[start].record becomes the family's lowest record: read only through fam_start below */
    for (size_t g = 0; g < files; g++) {
        w->records[keys[g].record].family = keys[g].record;
    }
    for (size_t g = 0; g < files; g++) {
        walk_record *first = &w->records[keys[fam_start[g]].record];
        if (keys[g].record < first->family) {
            first->family = keys[g].record;
        }
    }
    for (size_t g = 0; g < files; g++) {
        w->records[keys[g].record].family = w->records[keys[fam_start[g]].record].family;
    }
    stg_mem_free(fam_start);
    stg_mem_free(keys);
    for (size_t i = 0; i < w->record_count && !w->nomem; i++) {
        walk_record *rec = &w->records[i];
        if (rec->suppressed || rec->fixed != NULL) {
            continue;
        }
        /* A leader precedes the records of its group: its target is made first. */
        if (rec->target == i) {
            size_t t = new_target(w, rec->file, rec->display, rec->root);
            if (t == SIZE_MAX) {
                return 0;
            }
            rec->target = t;
            /* another folder's group of the family came first: this one may reuse its read */
            if (rec->family != i) {
                w->targets[t].leader = w->records[rec->family].target;
            }
        } else {
            rec->target = w->records[rec->target].target;
        }
        w->targets[rec->target].last_record = i;
    }
    /* a leader's report is kept until its followers' records are out */
    for (size_t t = 0; t < w->target_count; t++) {
        size_t l = w->targets[t].leader;
        if (l != SIZE_MAX && w->targets[l].last_record < w->targets[t].last_record) {
            w->targets[l].last_record = w->targets[t].last_record;
        }
    }
    return shown;
}

/* What a record is, for stg_scan_tree's records (stg_tree_kind). */
static stg_tree_kind record_kind(const walk *w, const walk_record *rec)
{
    if (rec->fixed != NULL) {
        return STG_TREE_NOT_READ;
    }
    if (w->files[rec->file].is_stdin) {
        return STG_TREE_STDIN;
    }
    return rec->blob != NULL ? STG_TREE_LINK : STG_TREE_FILE;
}

/* Hands one record out: report r, of this kind, with the link target blob (or NULL). */
typedef void (*walk_emit_fn)(void *user, const stg_report *r, stg_tree_kind kind, const char *blob);

/* The running side of a walk: where records go, the workers, the progress shown. */
typedef struct walk_run_state {
    walk_emit_fn on_record;
    void *user;
    stg_walk_progress_fn on_progress;
    void *progress_user;
    stg_walk_progress prog;
    double start;
    uint32_t period; /* ms between two progress calls while a record waits */
    pthread_t tids[STG_WALK_MAX_THREADS];
    unsigned started;
    bool interrupted;
} walk_run_state;

/* Turns the arguments into settled records: STG_OK with *shown records to hand out, or the
 * status the walk ends with (w not freed). */
static stg_status walk_arguments(walk *w, const char *const *paths, size_t count, size_t *shown)
{
    for (size_t i = 0; i < count && !w->nomem; i++) {
        if (paths[i] == NULL) {
            return STG_E_BAD_ARG;
        }
        if (strcmp(paths[i], "-") == 0) {
            if (w->stdin_seen) {
                return STG_E_BAD_ARG;
            }
            w->stdin_seen = true;
            add_stdin(w);
        } else {
            walk_argument(w, paths[i]);
        }
    }
    *shown = 0;
    if (!w->nomem) {
        *shown = settle_records(w);
    }
    if (w->nomem) {
        return STG_E_NOMEM;
    }
    if (w->opt->scan.expected_sha256 != NULL && *shown != 1) {
        return STG_E_BAD_ARG; /* an expected digest names one file */
    }
    return STG_OK;
}

/* Initialises the lock and condition and starts the workers (or scans here when no thread is
 * worth or can be started). */
static void start_workers(walk *w, walk_run_state *s)
{
    const stg_walk_options *opt = w->opt;
    unsigned nthreads = opt->threads == 0 ? 1 : opt->threads;
    if (nthreads > w->target_count) {
        nthreads = (unsigned)w->target_count;
    }
    s->started = 0;
    pthread_mutex_init(&w->lock, NULL);
    w->siblings = stg_sibling_cache_new();
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->changed, &ca);
    pthread_condattr_destroy(&ca);
    if (cancelled(opt)) {
        nthreads = 0; /* cancelled already: no file is started */
    }
    /* One file and no progress to report while it is scanned: scanned on this thread (a
     * thread's start-up was about a tenth of a one-file CLI process). */
    if (w->target_count == 1 && s->on_progress == NULL) {
        nthreads = 0;
    }
    for (; s->started < nthreads; s->started++) {
        if (pthread_create(&s->tids[s->started], NULL, worker_main, w) != 0) {
            break;
        }
    }
    if (s->started == 0 && w->target_count > 0 && !cancelled(opt)) {
        worker_main(w); /* no thread could start: scan here */
    }
}

/* Waits, w->lock held, until t is done or the walk is cancelled, calling on_progress each
 * period meanwhile with what is read of the files being scanned. */
static void wait_target(walk *w, walk_run_state *s, const walk_record *rec, const walk_target *t)
{
    while (!t->done && !s->interrupted) {
        if (cancelled(w->opt)) {
            s->interrupted = true;
            break;
        }
        struct timespec ts;
        wait_deadline(&ts, s->period);
        int rc = pthread_cond_timedwait(&w->changed, &w->lock, &ts);
        if (rc == ETIMEDOUT && s->on_progress != NULL) {
            /* what is read of the files being scanned counts already */
            uint64_t live = 0;
            for (size_t k = rec->target; k < w->next_job && k < w->target_count; k++) {
                if (!w->targets[k].done) {
                    live += __atomic_load_n(&w->targets[k].live, __ATOMIC_RELAXED);
                }
            }
            s->prog.bytes_done = w->bytes_done + live;
            s->prog.seconds = now_seconds() - s->start;
            s->prog.current = rec->display;
            pthread_mutex_unlock(&w->lock);
            s->on_progress(s->progress_user, &s->prog);
            s->prog.current = NULL;
            pthread_mutex_lock(&w->lock);
        }
    }
}

/* The report of rec's scanned file, once its scan is done; NULL when the walk ends at rec
 * (interrupted, or *status set). */
static stg_report *scanned_report(walk *w, walk_run_state *s, const walk_record *rec,
                                  stg_status *status)
{
    walk_target *t = &w->targets[rec->target];
    pthread_mutex_lock(&w->lock);
    wait_target(w, s, rec, t);
    if (s->interrupted && s->started > 0) {
        pthread_mutex_unlock(&w->lock);
        stop_workers(w, s->tids, &s->started); /* t's scan, if it began, ends here */
        pthread_mutex_lock(&w->lock);
    }
    if (!t->done || t->cut) {
        /* never started, or its read was cut: the walk ends here */
        s->interrupted = true;
        pthread_mutex_unlock(&w->lock);
        return NULL;
    }
    stg_report *r = t->reuse ? w->targets[t->leader].report : t->report;
    pthread_mutex_unlock(&w->lock);
    if (r == NULL) {
        /* the scan's own status: out of memory, or OpenSSL failing on standard input */
        *status = t->status != STG_OK ? t->status : STG_E_NOMEM;
        return NULL;
    }
    stg_report_set_blob(r, rec->blob);
    return r;
}

/* Frees the reports record i was the last to need (its target's, its leader's). */
static void release_reports(walk *w, const walk_record *rec, size_t i)
{
    if (rec->fixed != NULL) {
        return;
    }
    size_t lead = w->targets[rec->target].leader;
    if (w->targets[rec->target].last_record == i) {
        pthread_mutex_lock(&w->lock);
        stg_report_free(w->targets[rec->target].report);
        w->targets[rec->target].report = NULL;
        pthread_mutex_unlock(&w->lock);
    }
    if (lead != SIZE_MAX && w->targets[lead].last_record == i) {
        pthread_mutex_lock(&w->lock);
        stg_report_free(w->targets[lead].report);
        w->targets[lead].report = NULL;
        pthread_mutex_unlock(&w->lock);
    }
}

/* Hands the records out in order as their scans end. Cancelled: no file is started any more,
 * the reads running stop (stg_scan_file_into polls the cancel between chunks; a scan that
 * finished first keeps its record), and the walk stops at the first record whose file was
 * never started or whose read was cut. */
static stg_status emit_records(walk *w, walk_run_state *s)
{
    stg_status status = STG_OK;
    for (size_t i = 0; i < w->record_count; i++) {
        walk_record *rec = &w->records[i];
        if (rec->suppressed) {
            continue;
        }
        if (!s->interrupted && cancelled(w->opt)) {
            s->interrupted = true;
            stop_workers(w, s->tids, &s->started);
        }
        stg_report *r = rec->fixed;
        if (r == NULL) {
            r = scanned_report(w, s, rec, &status);
            if (r == NULL) {
                break;
            }
        }
        stg_report_set_path(r, rec->display);
        s->on_record(s->user, r, record_kind(w, rec), rec->fixed == NULL ? rec->blob : NULL);
        s->prog.files_done++;
        release_reports(w, rec, i);
        if (s->on_progress != NULL) {
            pthread_mutex_lock(&w->lock);
            s->prog.bytes_done = w->bytes_done;
            pthread_mutex_unlock(&w->lock);
            s->prog.seconds = now_seconds() - s->start;
            s->on_progress(s->progress_user, &s->prog);
        }
    }
    return status;
}

static void fill_result(const walk *w, const walk_run_state *s, size_t shown,
                        stg_walk_result *result)
{
    result->files = s->prog.files_done;
    result->bytes = w->bytes_done;
    result->distinct_scanned = w->distinct;
    result->records_total = shown;
    result->skipped_self = w->skipped_self;
    result->interrupted = s->interrupted && s->prog.files_done < shown;
    result->skipped_git = w->skipped_git;
    result->skipped_no_exist = w->skipped_no_exist;
    result->skipped_locks = w->skipped_locks;
    result->skipped_incomplete = w->skipped_incomplete;
}

static stg_status walk_run(const char *const *paths, size_t count, const stg_walk_options *opt,
                           walk_emit_fn on_record, void *user, stg_walk_progress_fn on_progress,
                           void *progress_user, stg_walk_result *result)
{
    if (paths == NULL || count == 0 || opt == NULL || on_record == NULL ||
        opt->threads > STG_WALK_MAX_THREADS ||
        (opt->shard_count != 0 && opt->shard_index >= opt->shard_count)) {
        return STG_E_BAD_ARG;
    }
    uint8_t parsed[32];
    if (opt->scan.expected_sha256 != NULL &&
        !stg_sha256_parse_hex(opt->scan.expected_sha256, parsed)) {
        return STG_E_BAD_ARG;
    }
    walk w;
    memset(&w, 0, sizeof w);
    w.opt = opt;
    uint64_t seed = stg_scan_seed();
    stg_idmap_init(&w.file_ids, seed);
    stg_idmap_init(&w.dirs_seen, seed ^ 0x9E3779B97F4A7C15u);
    walk_run_state s = {.on_record = on_record,
                        .user = user,
                        .on_progress = on_progress,
                        .progress_user = progress_user,
                        .start = now_seconds()};
    size_t shown = 0;
    stg_status status = walk_arguments(&w, paths, count, &shown);
    if (status != STG_OK) {
        free_walk(&w);
        return status;
    }
    start_workers(&w, &s);
    s.period = opt->progress_ms == 0 ? 250 : opt->progress_ms;
    s.prog.files_total = shown;
    for (size_t i = 0; i < w.target_count; i++) {
        /* a follower's file is its leader's: counted once (read again only when the leader's
         * result looked at neighbours) */
        if (w.targets[i].leader == SIZE_MAX) {
            s.prog.bytes_total += w.files[w.targets[i].file].size_hint;
        }
    }
    status = emit_records(&w, &s);
    if (status != STG_OK || s.interrupted) {
        /* Stop handing out work; let running scans end. */
        pthread_mutex_lock(&w.lock);
        w.next_job = w.target_count;
        pthread_mutex_unlock(&w.lock);
    }
    for (unsigned i = 0; i < s.started; i++) {
        pthread_join(s.tids[i], NULL);
    }
    pthread_cond_destroy(&w.changed);
    pthread_mutex_destroy(&w.lock);
    if (result != NULL) {
        fill_result(&w, &s, shown, result);
    }
    free_walk(&w);
    return status;
}

/* stg_walk: records as reports only. */
typedef struct walk_plain {
    stg_walk_record_fn on_record;
    void *user;
} walk_plain;

static void emit_plain(void *user, const stg_report *r, stg_tree_kind kind, const char *blob)
{
    (void)kind;
    (void)blob;
    const walk_plain *p = user;
    p->on_record(p->user, r);
}

stg_status stg_walk(const char *const *paths, size_t count, const stg_walk_options *opt,
                    stg_walk_record_fn on_record, stg_walk_progress_fn on_progress, void *user,
                    stg_walk_result *result)
{
    if (on_record == NULL) {
        return STG_E_BAD_ARG;
    }
    walk_plain p = {on_record, user};
    return walk_run(paths, count, opt, emit_plain, &p, on_progress, user, result);
}

/* ------------------------------------------------------------------------------ public API */

#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(stg_tree_options) == 536, "stg_tree_options layout is part of the ABI");
_Static_assert(sizeof(stg_tree_record) == 64, "stg_tree_record layout is part of the ABI");
_Static_assert(sizeof(stg_tree_progress) == 88, "stg_tree_progress layout is part of the ABI");
_Static_assert(sizeof(stg_tree_summary) == 184, "stg_tree_summary layout is part of the ABI");
#endif

stg_status stg_tree_options_init(stg_tree_options *out, uint32_t struct_version)
{
    if (out == NULL) {
        return STG_E_BAD_ARG;
    }
    memset(out, 0, sizeof *out);
    out->struct_version = struct_version;
    stg_status st = stg_scan_options_init(&out->scan, struct_version);
    out->threads = 1;
    out->stdin_fd = 0;
    out->follow_links = true;
    out->hf_cache = true;
    out->progress_ms = 250;
    return st;
}

typedef struct tree_call {
    stg_tree_record_fn on_record;
    void (*on_progress)(void *user, const stg_tree_progress *p);
    void *user;
    uint64_t verdicts[5];
} tree_call;

static void emit_tree(void *user, const stg_report *r, stg_tree_kind kind, const char *blob)
{
    tree_call *c = user;
    stg_tree_record rec;
    memset(&rec, 0, sizeof rec);
    rec.struct_version = STG_STRUCT_VERSION;
    rec.path = stg_report_path(r);
    rec.blob = blob;
    rec.kind = kind;
    rec.report = r;
    stg_verdict v = stg_report_verdict(r);
    if ((unsigned)v < 5) {
        c->verdicts[v]++;
    }
    c->on_record(c->user, &rec);
}

static void progress_tree(void *user, const stg_walk_progress *p)
{
    tree_call *c = user;
    stg_tree_progress tp;
    memset(&tp, 0, sizeof tp);
    tp.struct_version = STG_STRUCT_VERSION;
    tp.files_done = p->files_done;
    tp.files_total = p->files_total;
    tp.bytes_done = p->bytes_done;
    tp.bytes_total = p->bytes_total;
    tp.seconds = p->seconds;
    tp.current = p->current;
    c->on_progress(c->user, &tp);
}

stg_status stg_scan_tree(const char *const *paths, size_t count, const stg_tree_options *opt,
                         stg_tree_record_fn on_record, void *user, stg_tree_summary *summary)
{
    if (summary != NULL) {
        memset(summary, 0, sizeof *summary);
        summary->struct_version = STG_STRUCT_VERSION;
    }
    if (opt == NULL || on_record == NULL) {
        return STG_E_BAD_ARG;
    }
    /* docs/abi.md: versions first, before anything else of the struct is read */
    if (!stg_struct_version_known(opt->struct_version) ||
        !stg_struct_version_known(opt->scan.struct_version)) {
        return STG_E_STRUCT_VERSION;
    }
    stg_walk_options w;
    stg_walk_options_default(&w);
    stg_status st = stg_limits_accept(&opt->scan.limits, &w.scan.limits);
    if (st != STG_OK) {
        return st;
    }
    /* Every field is in struct version 1 (reserved space is not read). */
    w.scan.policy = opt->scan.policy;
    w.scan.digest = opt->scan.digest;
    w.scan.expected_sha256 = opt->scan.expected_sha256;
    w.scan.root = opt->scan.root;
    w.include = opt->include;
    w.include_count = opt->include_count;
    w.exclude = opt->exclude;
    w.exclude_count = opt->exclude_count;
    w.threads = opt->threads;
    w.stdin_fd = opt->stdin_fd;
    w.stdin_name = opt->stdin_name;
    w.progress_ms = opt->progress_ms;
    w.cancel = opt->cancel;
    w.skip_set = opt->skip_file;
    w.skip_dev = opt->skip_dev;
    w.skip_ino = opt->skip_ino;
    w.shard_index = opt->shard_index;
    w.shard_count = opt->shard_count;
    w.scan_git = opt->scan_git;
    w.follow_links = opt->follow_links;
    w.hf_cache = opt->hf_cache;
    tree_call c;
    memset(&c, 0, sizeof c);
    c.on_record = on_record;
    c.on_progress = opt->on_progress;
    c.user = user;
    stg_walk_result res;
    memset(&res, 0, sizeof res);
    st = walk_run(paths, count, &w, emit_tree, &c, opt->on_progress != NULL ? progress_tree : NULL,
                  &c, &res);
    if (summary != NULL) {
        stg_tree_summary full;
        memset(&full, 0, sizeof full);
        full.struct_version = STG_STRUCT_VERSION;
        full.records = res.files;
        full.records_total = res.records_total;
        memcpy(full.verdicts, c.verdicts, sizeof full.verdicts);
        full.bytes = res.bytes;
        full.files_read = res.distinct_scanned;
        full.skipped_self = res.skipped_self;
        full.skipped_git = res.skipped_git;
        full.skipped_no_exist = res.skipped_no_exist;
        full.skipped_locks = res.skipped_locks;
        full.skipped_incomplete = res.skipped_incomplete;
        full.interrupted = res.interrupted;
        *summary = full;
    }
    return st;
}
