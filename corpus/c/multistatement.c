/* Several statements on one line, and statements spanning lines. */
#include <stdio.h>

int main(void) {
    int a = 1; int b = 2; int c = 3;
    a += b; b += c; c += a;
    if (a > 2) { a = 0; b = 1; } else { c = 0; }
    int long_sum = a +
                   b +
                   c;
    for (int i = 0; i < 2; i++) { a++; b--; }
    printf("%d %d %d %d\n", a, b, c, long_sum);
    return 0;
}
