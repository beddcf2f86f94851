/* goto: a loop made of labels, and a cleanup exit. */
#include <stdio.h>

static int find(const int *a, int n, int wanted) {
    int i = 0;
again:
    if (i >= n)
        goto not_found;
    if (a[i] == wanted)
        goto found;
    i++;
    goto again;
found:
    return i;
not_found:
    return -1;
}

int main(void) {
    int data[] = {4, 8, 15, 16, 23, 42};
    int a = find(data, 6, 16);
    int b = find(data, 6, 5);
    printf("%d %d\n", a, b);
    return 0;
}
