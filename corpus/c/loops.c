/* Loops: for, while, do-while, nested, break and continue. */
#include <stdio.h>

int main(void) {
    int sum = 0;
    for (int i = 0; i < 5; i++) {
        if (i == 3)
            continue;
        sum += i;
    }

    int n = 10;
    while (n > 0) {
        n -= 3;
    }

    int k = 0;
    do {
        k++;
    } while (k < 4);

    int pairs = 0;
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            if (b > a)
                break;
            pairs++;
        }
    }
    printf("%d %d %d %d\n", sum, n, k, pairs);
    return 0;
}
