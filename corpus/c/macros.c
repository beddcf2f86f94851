/* Object-like, function-like and multi-line macros. */
#include <stdio.h>

#define SIZE 4
#define SQUARE(x) ((x) * (x))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ACCUMULATE(acc, v)   \
    do {                     \
        (acc) += (v);        \
        (acc) *= 2;          \
    } while (0)

int main(void) {
    int acc = 0;
    int best = 0;
    for (int i = 0; i < SIZE; i++) {
        int sq = SQUARE(i + 1);
        best = MAX(best, sq);
        ACCUMULATE(acc, sq);
    }
    printf("%d %d\n", acc, best);
    return 0;
}
