/* Ternaries, the comma operator and short-circuit evaluation. */
#include <stdio.h>

static int calls = 0;

static int touch(int v) {
    calls++;
    return v;
}

int main(void) {
    int a = 0, b = 5;
    int c = (a++, b++, a + b);
    int d = a > b ? a : b;
    int e = touch(0) && touch(1);
    int f = touch(1) || touch(2);
    int g = (touch(1) && touch(0)) ? 10 : 20;
    printf("%d %d %d %d %d %d\n", c, d, e, f, g, calls);
    return 0;
}
