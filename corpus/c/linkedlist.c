/* A singly linked list on the heap: push, reverse, sum, free. */
#include <stdio.h>
#include <stdlib.h>

struct node {
    int value;
    struct node *next;
};

static struct node *push(struct node *head, int value) {
    struct node *n = malloc(sizeof *n);
    if (!n)
        exit(1);
    n->value = value;
    n->next = head;
    return n;
}

static struct node *reverse(struct node *head) {
    struct node *prev = NULL;
    while (head) {
        struct node *next = head->next;
        head->next = prev;
        prev = head;
        head = next;
    }
    return prev;
}

int main(void) {
    struct node *list = NULL;
    for (int i = 1; i <= 4; i++)
        list = push(list, i * 10);
    list = reverse(list);
    int sum = 0;
    int first = list->value;
    while (list) {
        struct node *dead = list;
        sum += list->value;
        list = list->next;
        free(dead);
    }
    printf("%d %d\n", first, sum);
    return 0;
}
