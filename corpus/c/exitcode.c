/* A deliberate non-zero exit status (3) reached through nested calls. */
#include <stdio.h>

static int check(int v) {
    if (v % 7 == 0)
        return 1;
    return 0;
}

static int scan(int from, int to) {
    int hits = 0;
    for (int v = from; v < to; v++)
        hits += check(v);
    return hits;
}

int main(void) {
    int hits = scan(1, 22);
    printf("%d\n", hits);
    return hits; /* exits with status 3 on purpose */
}
