/* Globals and static locals. */
#include <stdio.h>

int counter = 0;
static int limit = 3;
const char *label = "calls";

static int next_id(void) {
    static int id = 100;
    id += 1;
    counter++;
    return id;
}

int main(void) {
    int last = 0;
    while (counter < limit) {
        last = next_id();
    }
    printf("%s %d %d\n", label, counter, last);
    return 0;
}
