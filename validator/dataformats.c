/* Data file rules (see dataformats.h). */
#include "dataformats.h"

#include "../parser/dataformats.h"

static void report_parse(stg_report *r, stg_parse_status st, const stg_parse_detail *d,
                         stg_code code, const char *format)
{
    if (st == STG_PARSE_OK) {
        return;
    }
    if (st == STG_PARSE_LIMIT) {
        stg_report_add(r, STG_LIMIT_EXCEEDED, d->offset, "the %s walk stopped: %s", format,
                       d->what != NULL ? d->what : "a ceiling");
        return;
    }
    stg_report_add(r, code, d->offset, "the %s file: %s", format,
                   d->what != NULL ? d->what : "malformed");
}

void stg_check_tf_index(const uint8_t *buf, size_t len, stg_report *r)
{
    stg_sstable_info info;
    stg_parse_detail d = {0, NULL, NULL, 0};
    report_parse(r, stg_sstable_check(buf, len, &info, &d), &d, STG_TF_INDEX_MALFORMED,
                 "TensorFlow variables.index");
}

void stg_check_parquet(const uint8_t *buf, size_t len, stg_report *r)
{
    uint32_t footer = 0;
    stg_parse_detail d = {0, NULL, NULL, 0};
    report_parse(r, stg_parquet_check(buf, len, &footer, &d), &d, STG_DATASET_MALFORMED, "Parquet");
}

void stg_check_arrow(const uint8_t *buf, size_t len, stg_report *r)
{
    uint32_t messages = 0;
    stg_parse_detail d = {0, NULL, NULL, 0};
    report_parse(r, stg_arrow_check(buf, len, &messages, &d), &d, STG_DATASET_MALFORMED, "Arrow");
}
