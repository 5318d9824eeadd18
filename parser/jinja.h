/* Jinja2 lexer (docs/templates.md): template text -> tokens, as jinja2's own lexer (3.1,
 * default delimiters, no line statements) cuts it, nothing else: no template is compiled or
 * run. Data between tags is one DATA token; `{{ }}` and `{% %}` open and close with their
 * whitespace-control marks (`-`, `+`); comments `{# #}` are dropped; `{% raw %}` ... `{%
 * endraw %}` is DATA. Inside a tag: names, strings (escapes kept raw: stg_jinja_string_value
 * decodes them as Python's unicode-escape, which is what jinja2 does), integers, floats and
 * operators. As in jinja2, a `}}` or `%}` closes its tag only when every bracket opened in the
 * tag is closed (`{{ {'a': 1}}}` is a dict, then the end).
 *
 * Bounded: the text is at most STG_JINJA_MAX_BYTES, at most STG_JINJA_MAX_TOKENS tokens are
 * kept and brackets nest at most STG_JINJA_MAX_BRACKETS deep inside one tag; past a limit the
 * lex stops with STG_JINJA_E_LIMIT. Token memory comes from parser/mem.h. */
#ifndef STG_PARSER_JINJA_H
#define STG_PARSER_JINJA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STG_JINJA_MAX_BYTES ((size_t)8 << 20) /* the longest real templates are ~100 KiB */
#define STG_JINJA_MAX_TOKENS 524288u
#define STG_JINJA_MAX_BRACKETS 256u
#define STG_JINJA_NAME_MAX 64u /* a name longer than this is compared by its first bytes */

typedef enum stg_jinja_tok_type {
    STG_JT_DATA = 1,
    STG_JT_VAR_BEGIN,   /* {{ */
    STG_JT_VAR_END,     /* }} */
    STG_JT_BLOCK_BEGIN, /* {% */
    STG_JT_BLOCK_END,   /* %} */
    STG_JT_NAME,
    STG_JT_STRING, /* offset/len: the literal with its quotes */
    STG_JT_INTEGER,
    STG_JT_FLOAT,
    STG_JT_OP, /* op: one of the operator codes below */
    STG_JT_EOF
} stg_jinja_tok_type;

/* Operators: one byte each for the single-character ones (the character itself), these for
 * the two-character ones. */
enum {
    STG_JOP_FLOORDIV = 'F', /* // */
    STG_JOP_POW = 'P',      /* ** */
    STG_JOP_EQ = 'E',       /* == */
    STG_JOP_NE = 'N',       /* != */
    STG_JOP_GE = 'G',       /* >= */
    STG_JOP_LE = 'L'        /* <= */
};

typedef struct stg_jinja_tok {
    uint32_t offset; /* in the template text */
    uint32_t len;
    uint8_t type; /* stg_jinja_tok_type */
    uint8_t op;   /* STG_JT_OP: the operator */
} stg_jinja_tok;

typedef enum stg_jinja_error {
    STG_JINJA_OK = 0,
    STG_JINJA_E_SYNTAX,  /* a byte no token starts with, an unclosed string, comment or tag */
    STG_JINJA_E_BRACKET, /* a closing bracket that closes nothing or the wrong bracket */
    STG_JINJA_E_LIMIT,   /* a limit above; `limit` names it */
    STG_JINJA_E_MEMORY
} stg_jinja_error;

typedef struct stg_jinja_lex {
    stg_jinja_tok *toks; /* ends with one STG_JT_EOF token when error is OK */
    size_t count, cap;
    stg_jinja_error error;
    size_t error_offset; /* in the text */
    const char *why;     /* constant text: what was wrong */
    const char *limit;   /* STG_JINJA_E_LIMIT: "chat template bytes", "chat template tokens",
                            "chat template bracket depth" */
} stg_jinja_lex;

/* Lexes text[0..len). Returns true when the whole text was cut into tokens; false with
 * error, error_offset and why set (the tokens before the error are kept). Release with
 * stg_jinja_lex_release in every case. */
bool stg_jinja_lex_run(stg_jinja_lex *lx, const uint8_t *text, size_t len);
void stg_jinja_lex_release(stg_jinja_lex *lx);

/* The value of a STRING token decoded as jinja2 decodes it (Python's unicode-escape over the
 * literal between its quotes: \\ \' \" \n \t ... \ooo \xhh \uhhhh \Uhhhhhhhh; an unknown
 * escape keeps its backslash), into dst (UTF-8), at most cap bytes. *exact is false when the
 * value is not fully known: longer than cap, or a \N{name} escape (any character by its
 * Unicode name) or an escape Python refuses. Returns the bytes written. */
size_t stg_jinja_string_value(const uint8_t *text, const stg_jinja_tok *t, uint8_t *dst, size_t cap,
                              bool *exact);

#endif
