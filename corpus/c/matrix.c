/* Matrix multiplication with arrays passed to functions. */
#include <stdio.h>

#define N 3

static void multiply(int a[N][N], int b[N][N], int out[N][N]) {
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
            int acc = 0;
            for (int k = 0; k < N; k++)
                acc += a[i][k] * b[k][j];
            out[i][j] = acc;
        }
    }
}

int main(void) {
    int a[N][N] = {{1, 2, 0}, {0, 1, 0}, {2, 0, 1}};
    int id[N][N] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    int out[N][N];
    multiply(a, id, out);
    multiply(out, a, out);
    printf("%d %d %d\n", out[0][0], out[1][1], out[2][0]);
    return 0;
}
