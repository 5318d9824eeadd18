/* Tar reader that lists members exactly as CPython 3.11's tarfile does (the reader behind
 * torch.load's PyTorch 0.1 format, members sys_info, pickle, storages, tensors): any 512-byte
 * block whose checksum matches (unsigned or signed sum, no magic required) is a header; every
 * number field is parsed as tarfile's nti(); GNU long names/links ('L'/'K'), pax records ('x',
 * 'X', global 'g': path, linkpath, size, GNU.sparse.*) are folded into the member they describe;
 * unknown type flags are regular files; a header that fails after the first ends the archive,
 * one that fails inside a chain of extended headers makes tarfile raise. Members are found by
 * name as tarfile's getmember() (the last of that name) and links resolved as its
 * _find_link_target(). Nothing here allocates but stg_tar_list_build. */
#ifndef STG_PARSER_TAR_H
#define STG_PARSER_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cursor.h"
#include "status.h"

#define STG_TAR_BLOCK 512u
#define STG_TAR_NAME_MAX 4096u /* longer names: stguard refuses the archive (tarfile would not) */
#define STG_TAR_CHAIN_MAX 64u  /* extended headers before one member; tarfile recurses per header */
#define STG_TAR_LINK_HOPS 64u  /* link-to-link steps followed; tarfile recurses per step */
#define STG_TAR_MEMBERS_MAX 1000000u /* members listed; more: refused */

/* stg_tar_next's statuses (parser/status.h): STG_PARSE_OK, a member was produced;
 * STG_PARSE_END, tarfile's member list ends here (zero block, end of data, bad header);
 * STG_PARSE_MALFORMED, tarfile raises here (ReadError; at the first header: it does not open the
 * file at all), or stguard refuses what tarfile would read: stop, the detail says where and
 * what. */

typedef struct stg_tar_pax_value {
    const uint8_t *p; /* into the buffer; NULL when absent */
    size_t len;
    uint32_t seq; /* insertion order in tarfile's dict (the first insertion counts) */
} stg_tar_pax_value;

/* The pax keywords that change what tarfile lists. */
enum {
    STG_TAR_PAX_PATH,
    STG_TAR_PAX_LINKPATH,
    STG_TAR_PAX_SIZE,
    STG_TAR_PAX_SPARSE_NAME,
    STG_TAR_PAX_SPARSE_SIZE,
    STG_TAR_PAX_SPARSE_REALSIZE,
    STG_TAR_PAX_SPARSE_MAP,
    STG_TAR_PAX_SPARSE_MAJOR,
    STG_TAR_PAX_SPARSE_MINOR,
    STG_TAR_PAX_KEYS
};

typedef struct stg_tar_pax {
    stg_tar_pax_value v[STG_TAR_PAX_KEYS];
    uint32_t next_seq;
} stg_tar_pax;

typedef struct stg_tar {
    stg_cursor cur; /* the whole archive; cur.pos is the next header (tarfile's self.offset) */
    bool started;   /* a header was read: errors no longer mean "not a tar" */
    bool done;      /* END or MALFORMED was returned */
    /* END at a block that is neither zeros nor the end of the file (an invalid or truncated
     * header after the first member: tarfile stops listing there, GNU tar skips on). */
    const char *stop_why; /* NULL when the list ended cleanly */
    uint64_t stop_offset;
    stg_tar_pax glob; /* tarfile.pax_headers (global 'g' records) */
} stg_tar;

typedef struct stg_tar_entry {
    char name[STG_TAR_NAME_MAX + 1]; /* NUL-terminated copy; the name may hold no NUL */
    size_t name_len;
    char linkname[STG_TAR_NAME_MAX + 1];
    size_t link_len;
    char type;              /* the type flag byte ('0', NUL, '5' ...) after tarfile's V7 rule */
    bool sparse;            /* tarfile would assemble the data from a sparse map */
    uint64_t header_offset; /* tarfile's TarInfo.offset */
    uint64_t data_offset;   /* TarInfo.offset_data */
    int64_t size;           /* TarInfo.size (may be negative for types without data) */
    uint64_t next_offset;   /* where the next header is read */
} stg_tar_entry;

/* Regular for tarfile (isreg): '0', NUL, '7', 'S'. */
bool stg_tar_type_regular(char type);
/* extractfile() hands out the member's own bytes: regular or a type tarfile does not know. */
bool stg_tar_type_has_data(char type);

/* block (512 bytes) is a header tarfile's frombuf() accepts: not all zeros, the checksum matches
 * the unsigned or the signed sum, every number field parses (no magic is needed). */
bool stg_tar_header_ok(const uint8_t *block, size_t avail);

/* tarfile.open(mode='r:') succeeds and the first block is not all zeros. */
bool stg_tar_opens(const uint8_t *buf, size_t len);

void stg_tar_init(stg_tar *t, const uint8_t *buf, size_t len);

/* Next member (e may be NULL: only the status). On STG_PARSE_MALFORMED, *d (when not NULL) says
 * where and what; t->started is false when tarfile would not have opened the file. */
stg_parse_status stg_tar_next(stg_tar *t, stg_tar_entry *e, stg_parse_detail *d);

/* ------------------------------------------------------------ the whole member list */

typedef struct stg_tar_member {
    uint64_t header_offset, data_offset, next_offset;
    int64_t size;
    char type;
    bool sparse;
    uint32_t name_len, link_len;
    size_t name_at, link_at; /* into the list's name pool */
} stg_tar_member;

typedef struct stg_tar_list {
    stg_tar_member *m;
    size_t count;
    char *pool;
    size_t pool_len;
    stg_parse_status end; /* STG_PARSE_END, or MALFORMED with err */
    bool opened;          /* tarfile.open would succeed */
    const char *stop_why; /* END at an invalid header: see stg_tar.stop_why */
    uint64_t stop_offset;
    stg_parse_detail err; /* MALFORMED: where and what */
    bool out_of_memory;
} stg_tar_list;

/* Reads every member (tarfile's getmembers()). Returns false only when out of memory. */
bool stg_tar_list_build(stg_tar_list *l, const uint8_t *buf, size_t len);
void stg_tar_list_free(stg_tar_list *l);

static inline const char *stg_tar_member_name(const stg_tar_list *l, size_t i)
{
    return l->pool + l->m[i].name_at;
}

static inline const char *stg_tar_member_link(const stg_tar_list *l, size_t i)
{
    return l->pool + l->m[i].link_at;
}

#define STG_TAR_NONE ((size_t)-1)

/* getmember(name): the last member whose name equals name; STG_TAR_NONE if none. */
size_t stg_tar_list_find(const stg_tar_list *l, const char *name, size_t name_len);

typedef enum stg_tar_resolve_result {
    STG_TARRES_DATA = 0, /* *target: the member whose bytes extractfile() returns */
    STG_TARRES_NO_DATA,  /* a directory, device or FIFO: extractfile() returns None */
    STG_TARRES_MISSING,  /* a link to a name not in the archive: KeyError */
    STG_TARRES_LOOP,     /* links that never end: tarfile recurses until RecursionError */
    STG_TARRES_NOMEM
} stg_tar_resolve_result;

/* extractfile(member): links followed as _find_link_target (symbolic links: the whole archive,
 * the name joined to the link's directory; hard links: earlier members; both compared after
 * os.path.normpath). *hops counts the links followed and *through_symlink says whether one was
 * symbolic (extract() would make a real symlink and read the host's file there). */
stg_tar_resolve_result stg_tar_list_resolve(const stg_tar_list *l, size_t member, size_t *target,
                                            unsigned *hops, bool *through_symlink);

/* os.path.normpath(p[0..n)) into out (capacity n + 2); returns its length. */
size_t stg_tar_normpath(const char *p, size_t n, char *out);

#endif
