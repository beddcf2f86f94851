/* Recursion: factorial, fibonacci and mutual recursion. */
#include <stdio.h>

static int is_odd(int n);

static int is_even(int n) {
    if (n == 0)
        return 1;
    return is_odd(n - 1);
}

static int is_odd(int n) {
    if (n == 0)
        return 0;
    return is_even(n - 1);
}

long factorial(int n) {
    if (n <= 1)
        return 1;
    return n * factorial(n - 1);
}

int fib(int n) {
    // naive on purpose: a deep, branching call tree
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void) {
    long f = factorial(6);
    int g = fib(7);
    int e = is_even(7);
    printf("%ld %d %d\n", f, g, e);
    return 0;
}
