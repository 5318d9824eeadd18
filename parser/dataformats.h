/* Framing of the data files a model repository holds beside its models (internal;
 * docs/data-formats.md): a TensorFlow checkpoint's variables.index (a LevelDB-style sorted
 * table), Apache Parquet and the Arrow IPC file and stream formats. Each reader checks the
 * structure that says where the data lies (footers, block handles, message lengths) against the
 * file and reads none of the data itself. Bounded: every loop advances through the file, and
 * the Arrow footer and messages are flatbuffers walked with parser/flatbuffer.h. */
#ifndef STG_PARSER_DATAFORMATS_H
#define STG_PARSER_DATAFORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* The LevelDB table magic (table/format.h, kTableMagicNumber), the last 8 bytes of the file,
 * little-endian; the footer is 48 bytes (two block handles, padding, the magic). */
#define STG_SSTABLE_MAGIC 0xdb4775248b80fb57ull
#define STG_SSTABLE_FOOTER_LEN 48u
#define STG_SSTABLE_BLOCK_TRAILER 5u /* a block's type byte and CRC32C */
/* Entries of the index block walked at most (each is at least 4 bytes of the block). */
#define STG_SSTABLE_ENTRIES_CEILING ((uint32_t)1 << 24)

#define STG_PARQUET_MAGIC "PAR1"
#define STG_ARROW_MAGIC "ARROW1"
#define STG_ARROW_CONTINUATION 0xFFFFFFFFu

/* What a table's framing says. */
typedef struct stg_sstable_info {
    uint64_t index_offset, index_size, meta_offset, meta_size;
    uint32_t data_blocks; /* handles in the index block */
} stg_sstable_info;

/* true when the last 8 bytes of buf are the table magic (and the file holds a footer). */
bool stg_sstable_sniff(const uint8_t *buf, size_t len);
/* The footer's handles and every data block handle of the index block inside the file. */
stg_parse_status stg_sstable_check(const uint8_t *buf, size_t len, stg_sstable_info *info,
                                   stg_parse_detail *d);

/* true when buf starts with PAR1 (the end is stg_parquet_check's: a cut file is malformed). */
bool stg_parquet_sniff(const uint8_t *buf, size_t len);
/* The footer length inside the file; *footer_len gets it. */
stg_parse_status stg_parquet_check(const uint8_t *buf, size_t len, uint32_t *footer_len,
                                   stg_parse_detail *d);

/* true when buf is the Arrow file format (ARROW1 and padding) or a stream whose first message
 * is a continuation marker, a metadata length inside the file and a flatbuffer Message. */
bool stg_arrow_sniff(const uint8_t *buf, size_t len);
/* The file format's footer and record-batch blocks, or a stream's messages, inside the file;
 * *messages gets the number of blocks or messages seen. */
stg_parse_status stg_arrow_check(const uint8_t *buf, size_t len, uint32_t *messages,
                                 stg_parse_detail *d);

#endif
