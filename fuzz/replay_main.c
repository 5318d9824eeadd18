/* Target: any harness. Supplies main() so ctest replays every file under the given paths
 * (directories recursively, in sorted order) through LLVMFuzzerTestOneInput without libFuzzer.
 * A crash or abort fails the test; the file being replayed is printed first so it can be found. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parser/sort.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long replayed;

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) {
        fclose(f);
        return -1;
    }
    for (;;) {
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0) {
            break;
        }
        n += got;
    }
    fclose(f);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    /* A private copy of exactly n bytes, so ASan sees reads past the end. */
    uint8_t *exact = malloc(n == 0 ? 1 : n);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    replayed++;
    return 0;
}

static int cmp_names(const void *a, const void *b, void *ctx)
{
    (void)ctx;
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: cannot stat %s\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        return S_ISREG(st.st_mode) ? replay_file(path) : 0;
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        return -1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (count == cap) {
            cap = cap == 0 ? 64 : cap * 2;
            char **nn = realloc(names, cap * sizeof *nn);
            if (nn == NULL) {
                break;
            }
            names = nn;
        }
        names[count++] = strdup(e->d_name);
    }
    closedir(d);
    if (count > 0) {
        stg_sort(names, count, sizeof *names, cmp_names, NULL);
    }
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, names[i]);
        if (replay_path(child) != 0) {
            rc = -1;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize != NULL) {
        LLVMFuzzerInitialize(&argc, &argv);
    }
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (replay_path(argv[i]) != 0) {
            rc = 1;
        }
    }
    printf("replayed %lu files\n", replayed);
    if (replayed == 0) {
        fprintf(stderr, "replay: no input files\n");
        return 1;
    }
    return rc;
}
