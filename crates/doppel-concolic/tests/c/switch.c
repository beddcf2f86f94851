#include <stdio.h>

int main(void) {
    int n;
    if (scanf("%d", &n) != 1) /* READ */
        return 1;
    int s = 0;
    for (int i = 0; i < n; i++) /* LOOP */
        s += i;
    if (s > 10) /* BIG */
        puts("big");
    else
        puts("small");
    printf("%d\n", s);
    return 0;
}
