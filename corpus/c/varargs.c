/* Variadic functions with stdarg. */
#include <stdarg.h>
#include <stdio.h>

static int sum_ints(int count, ...) {
    va_list ap;
    va_start(ap, count);
    int total = 0;
    for (int i = 0; i < count; i++) {
        int v = va_arg(ap, int);
        total += v;
    }
    va_end(ap);
    return total;
}

static double average(int count, ...) {
    va_list ap;
    va_start(ap, count);
    double s = 0.0;
    for (int i = 0; i < count; i++)
        s += va_arg(ap, double);
    va_end(ap);
    return count ? s / count : 0.0;
}

int main(void) {
    int a = sum_ints(3, 1, 2, 3);
    int b = sum_ints(0);
    double m = average(2, 1.5, 2.5);
    printf("%d %d %.3f\n", a, b, m);
    return 0;
}
