/* Recursion, structs, function pointers (call_indirect), 2D arrays. */
#include <stdio.h>

struct point { int x, y; };
typedef int (*op)(int, int);
static int add(int a, int b) { return a + b; }
static int mul(int a, int b) { return a * b; }
static int sub(int a, int b) { return a - b; }
static long long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int grid[20][20];

int main(void) {
  int n;
  if (scanf("%d", &n) != 1 || n < 0 || n > 25) { printf("bad\n"); return 1; }
  op ops[3] = {add, mul, sub};
  struct point p = {n, n * 2};
  for (int i = 0; i < 20; i++)
    for (int j = 0; j < 20; j++) grid[i][j] = ops[(i + j) % 3](i, j) ^ n;
  long long s = 0;
  for (int i = 0; i < 20; i++) s += grid[i][(i * n) % 20];
  printf("fib(%d)=%lld p=(%d,%d) s=%lld\n", n, fib(n), p.x, p.y, s);
  return 0;
}
