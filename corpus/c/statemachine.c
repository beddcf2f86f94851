/* A small state machine over a string, with an enum state and a loop. */
#include <stdio.h>

enum state { START, IN_WORD, IN_SPACE };

static int count_words(const char *s) {
    enum state st = START;
    int words = 0;
    for (; *s; s++) {
        int space = (*s == ' ' || *s == '\t');
        switch (st) {
        case START:
        case IN_SPACE:
            if (!space) {
                st = IN_WORD;
                words++;
            } else {
                st = IN_SPACE;
            }
            break;
        case IN_WORD:
            if (space)
                st = IN_SPACE;
            break;
        }
    }
    return words;
}

int main(void) {
    int a = count_words("  find bugs  in debuggers ");
    int b = count_words("");
    printf("%d %d\n", a, b);
    return 0;
}
