/* switch with fallthrough, default, and nested switch. */
#include <stdio.h>

static int classify(int c) {
    int score = 0;
    switch (c) {
    case 0:
        score += 1;
        /* fall through */
    case 1:
        score += 2;
        break;
    case 2:
    case 3:
        score = 10;
        break;
    default:
        switch (c % 2) {
        case 0: score = -2; break;
        default: score = -1;
        }
    }
    return score;
}

int main(void) {
    int total = 0;
    for (int i = 0; i < 6; i++)
        total += classify(i);
    printf("%d\n", total);
    return 0;
}
