/* Nested block scopes and shadowing. */
#include <stdio.h>

int x = 1;

int main(void) {
    int total = x;
    int x = 10;
    total += x;
    {
        int x = 100;
        total += x;
        {
            int y = x + 1;
            int x = 1000;
            total += x + y;
        }
        total += x;
    }
    for (int x = 0; x < 2; x++) {
        total += x;
    }
    printf("%d %d\n", total, x);
    return 0;
}
