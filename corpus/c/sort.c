/* Sorting: insertion sort and qsort with a comparison callback. */
#include <stdio.h>
#include <stdlib.h>

static void insertion_sort(int *a, int n) {
    for (int i = 1; i < n; i++) {
        int key = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > key) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = key;
    }
}

static int descending(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    return (a < b) - (a > b);
}

int main(void) {
    int v[7] = {9, 3, 7, 1, 8, 2, 5};
    int w[7];
    for (int i = 0; i < 7; i++)
        w[i] = v[i];
    insertion_sort(v, 7);
    qsort(w, 7, sizeof w[0], descending);
    printf("%d %d %d %d\n", v[0], v[6], w[0], w[6]);
    return 0;
}
