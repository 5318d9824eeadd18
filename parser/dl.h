/* Libraries loaded at run time (dlopen), for the calls the library makes into libcrypto
 * (loader/evp.c) and the decompression libraries (parser/codec_libs.c): each is opened once,
 * bound at once (RTLD_NOW), kept for the life of the process, and its symbols copied into
 * function pointers. Loading a library reads no input. */
#ifndef STG_PARSER_DL_H
#define STG_PARSER_DL_H

#include <stdbool.h>
#include <stddef.h>

/* The first of the NULL-terminated sonames that loads, searched as the dynamic linker searches a
 * DT_NEEDED entry; NULL when none does. */
void *stg_dl_open_first(const char *const *sonames);

/* Copies the address of name in lib (NULL: fails) into the function pointer at fn_ptr, of
 * fn_size bytes, without the object-to-function pointer cast ISO C lacks; false when absent. */
bool stg_dl_sym(void *lib, const char *name, void *fn_ptr, size_t fn_size);

#endif
