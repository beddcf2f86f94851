/* Function pointers: a dispatch table and a callback. */
#include <stdio.h>

typedef int (*binop)(int, int);

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }

static int fold(const int *v, int n, binop f, int init) {
    int acc = init;
    for (int i = 0; i < n; i++)
        acc = f(acc, v[i]);
    return acc;
}

int main(void) {
    binop table[3] = {add, sub, mul};
    int v[4] = {1, 2, 3, 4};
    int results[3];
    for (int k = 0; k < 3; k++) {
        binop op = table[k];
        results[k] = fold(v, 4, op, k == 2 ? 1 : 0);
    }
    printf("%d %d %d\n", results[0], results[1], results[2]);
    return 0;
}
