/* Test-only driver: prints, for each file named on the command line, what stguard's zip reader
 * says each loader's reader (parser/zip.h stg_zip_reader) would load: whether it opens the
 * archive, which central directory it takes, and every entry with its local header and data
 * range. One JSON line per file; names are hex so no escaping is needed. The differential test
 * (tests/differential/script_zip_differential.sh) compares this with what Python's zipfile and torch's
 * PyTorchFileReader really return. */
#include <stdio.h>
#include <stdlib.h>

#include "parser/zip.h"
#include "testutil.h"

static const char *result_name(stg_zip_result zr)
{
    switch (zr) {
    case STG_ZIPR_OK: return "ok";
    case STG_ZIPR_END: return "end";
    case STG_ZIPR_NOT_FOUND: return "not_found";
    case STG_ZIPR_ENTRY_BAD: return "bad";
    case STG_ZIPR_MALFORMED: return "malformed";
    case STG_ZIPR_NEED: return "need";
    }
    return "?";
}

static void print_hex(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        printf("%02x", p[i]);
    }
}

static void print_reader(const uint8_t *buf, size_t len, stg_zip_reader reader)
{
    stg_zip z;
    stg_zip_error err;
    stg_zip_result zr = stg_zip_open_as(&z, buf, len, reader, &err);
    printf("\"%s\":{\"open\":\"%s\"", stg_zip_reader_name(reader), result_name(zr));
    if (zr != STG_ZIPR_OK) {
        printf(",\"error_offset\":%llu}", (unsigned long long)err.offset);
        return;
    }
    printf(",\"eocd\":%llu,\"cd_start\":%llu,\"cd_size\":%llu,\"count\":%llu,\"zip64\":%s,"
           "\"entries\":[",
           (unsigned long long)z.eocd_offset, (unsigned long long)z.cd_start,
           (unsigned long long)z.cd_size, (unsigned long long)z.entry_count,
           z.zip64 ? "true" : "false");
    const char *sep = "";
    const char *walk_end = "end";
    for (;;) {
        stg_zip_entry e;
        zr = stg_zip_next(&z, &e, &err);
        if (zr == STG_ZIPR_END || zr == STG_ZIPR_MALFORMED) {
            walk_end = result_name(zr);
            break;
        }
        printf("%s{\"name\":\"", sep);
        print_hex(e.name, e.name_len);
        printf("\",\"status\":\"%s\",\"method\":%u,\"local_offset\":%lld", result_name(zr),
               (unsigned)e.method, e.local_offset == UINT64_MAX ? -1LL : (long long)e.local_offset);
        if (zr == STG_ZIPR_OK) {
            printf(",\"data_offset\":%llu,\"data_len\":%llu,\"mismatch\":%u",
                   (unsigned long long)e.data_offset, (unsigned long long)e.data_len, e.mismatch);
        }
        printf("}");
        sep = ",";
    }
    printf("],\"walk\":\"%s\"}", walk_end);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        size_t len = 0;
        uint8_t *buf = tu_read_file(argv[i], &len);
        if (buf == NULL) {
            fprintf(stderr, "zip_members: cannot read %s\n", argv[i]);
            return 2;
        }
        printf("{\"file\":\"%s\",", argv[i]);
        print_reader(buf, len, STG_ZIP_READER_ZIPFILE);
        printf(",");
        print_reader(buf, len, STG_ZIP_READER_MINIZ);
        printf("}\n");
        free(buf);
    }
    return 0;
}
