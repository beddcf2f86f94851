/* static inline functions called in loops and expressions. */
#include <stdio.h>

static inline int clamp(int v, int lo, int hi) {
    if (v < lo)
        return lo;
    if (v > hi)
        return hi;
    return v;
}

static inline int twice(int v) { return v * 2; }

int main(void) {
    int out = 0;
    for (int i = -3; i < 8; i += 2) {
        out += clamp(twice(i), 0, 10);
    }
    printf("%d\n", out);
    return 0;
}
