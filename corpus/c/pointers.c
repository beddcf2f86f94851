/* Pointers: pointer arithmetic, pointers to pointers, swapping. */
#include <stdio.h>

static void swap(int *a, int *b) {
    int t = *a;
    *a = *b;
    *b = t;
}

static int sum(const int *begin, const int *end) {
    int s = 0;
    while (begin != end) {
        s += *begin;
        begin++;
    }
    return s;
}

int main(void) {
    int values[5] = {5, 4, 3, 2, 1};
    int *first = values;
    int *last = values + 4;
    swap(first, last);
    int **pp = &first;
    (*pp)++;
    int total = sum(values, values + 5);
    printf("%d %d %d\n", values[0], *first, total);
    return 0;
}
