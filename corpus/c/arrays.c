/* Arrays: one- and two-dimensional, char arrays and strings. */
#include <stdio.h>
#include <string.h>

int main(void) {
    int squares[6];
    for (int i = 0; i < 6; i++)
        squares[i] = i * i;

    int grid[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
    int trace = 0;
    for (int i = 0; i < 3; i++)
        trace += grid[i][i];

    char word[16] = "debug";
    size_t len = strlen(word);
    word[0] = 'D';

    printf("%d %d %zu %s\n", squares[5], trace, len, word);
    return 0;
}
