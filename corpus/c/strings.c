/* String functions: copy, concatenate, compare, search, reverse in place. */
#include <stdio.h>
#include <string.h>

static void reverse(char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n / 2; i++) {
        char t = s[i];
        s[i] = s[n - 1 - i];
        s[n - 1 - i] = t;
    }
}

int main(void) {
    char buf[32];
    strcpy(buf, "dop");
    strcat(buf, "pel");
    int cmp = strcmp(buf, "doppel");
    const char *hit = strchr(buf, 'p');
    long offset = hit ? (long)(hit - buf) : -1;
    reverse(buf);
    printf("%s %d %ld\n", buf, cmp, offset);
    return 0;
}
