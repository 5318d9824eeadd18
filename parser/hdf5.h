/* A bounded HDF5 reader (docs/keras.md, "HDF5"): the superblock (versions 0-3), the root
 * group's object header (versions 1 and 2, with continuation blocks) and its attribute messages
 * (versions 1-3, compact storage), with fixed-length strings and variable-length strings
 * resolved through the global heap. It reads what a Keras loader asks h5py for first (the root
 * attributes model_config, training_config, keras_version, backend) and nothing else: groups,
 * datasets and their data are not walked. Every address is checked against the buffer before
 * it is followed; every loop has a cap (messages, continuation blocks, heap objects). */
#ifndef STG_PARSER_HDF5_H
#define STG_PARSER_HDF5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STG_HDF5_MAGIC "\x89HDF\r\n\x1a\n"
#define STG_HDF5_MAGIC_LEN 8u
/* The superblock sits at 0 or at a user block's end: 512, 1024, 2048, ... (the HDF5 spec). The
 * reader looks up to this offset (h5py's userblock_size is at most 2^32 in principle; stguard
 * reads the powers of two up to 1 MiB: a superblock further out is not found, and the file is
 * not called HDF5). */
#define STG_HDF5_SUPERBLOCK_SEARCH_MAX ((uint64_t)1 << 20)
/* Caps of the walk: header messages (over all blocks of the root header), continuation blocks,
 * objects of one global heap collection. Each is far above what h5py writes for a root group. */
#define STG_HDF5_MAX_MESSAGES 65536u
#define STG_HDF5_MAX_CONTINUATIONS 256u
#define STG_HDF5_MAX_HEAP_OBJECTS 65536u

typedef enum stg_hdf5_result {
    STG_HDF5R_OK = 0,
    STG_HDF5R_MALFORMED = 1,  /* bytes the format does not allow (HDF5 refuses them) */
    STG_HDF5R_UNSUPPORTED = 2 /* a structure this reader does not read */
} stg_hdf5_result;

/* One attribute of the root group. value is the string's bytes (trailing NUL or space padding
 * taken off as h5py does) when is_string, else the raw data. */
typedef struct stg_hdf5_attr {
    const uint8_t *name; /* not NUL-terminated; points into the buffer */
    size_t name_len;
    uint64_t offset;    /* the attribute message's data in the buffer */
    uint8_t type_class; /* the datatype class: 3 string, 9 variable-length, 0 integer, ... */
    bool is_string;     /* a fixed or variable-length string with one element */
    bool vlen;          /* the string came from the global heap */
    const uint8_t *value;
    size_t value_len;
    uint64_t value_offset; /* where value starts in the buffer */
} stg_hdf5_attr;

typedef struct stg_hdf5_file {
    uint64_t superblock_offset;
    uint8_t superblock_version;
    uint8_t offset_size, length_size;
    uint64_t base;        /* the absolute offset addresses are relative to */
    uint64_t eof;         /* the end of file the superblock declares (the file size) */
    uint64_t root_header; /* the root group's object header (absolute) */
    uint8_t root_header_version;
    uint32_t messages;     /* header messages read */
    uint32_t attributes;   /* attribute messages read */
    bool dense_attributes; /* an attribute info message points at a fractal heap */
    stg_hdf5_result result;
    uint64_t fail_offset;
    const char *fail_what; /* constant text */
} stg_hdf5_file;

/* The offset of the first HDF5 signature at 0, 512, 1024, ... within buf; false when none. */
bool stg_hdf5_find_superblock(const uint8_t *buf, size_t len, uint64_t *at);

/* Reads the superblock and the root group's attributes, calling on_attr(arg, a) for each (a is
 * valid during the call). Returns f->result; f is filled as far as the walk got. Dense
 * attribute storage (a fractal heap) is not read: f->dense_attributes says it is there, and the
 * result is then STG_HDF5R_UNSUPPORTED (the attributes it holds are unknown). */
stg_hdf5_result stg_hdf5_read_root(const uint8_t *buf, size_t len, stg_hdf5_file *f,
                                   void (*on_attr)(void *arg, const stg_hdf5_attr *a), void *arg);

#endif
