/* A binary search tree: recursive insert, depth and in-order walk. */
#include <stdio.h>
#include <stdlib.h>

struct tree {
    int key;
    struct tree *left, *right;
};

static struct tree *insert(struct tree *t, int key) {
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t)
            exit(1);
        t->key = key;
        return t;
    }
    if (key < t->key)
        t->left = insert(t->left, key);
    else
        t->right = insert(t->right, key);
    return t;
}

static int depth(const struct tree *t) {
    if (!t)
        return 0;
    int l = depth(t->left), r = depth(t->right);
    return 1 + (l > r ? l : r);
}

static void walk(const struct tree *t, int *out, int *n) {
    if (!t)
        return;
    walk(t->left, out, n);
    out[(*n)++] = t->key;
    walk(t->right, out, n);
}

static void destroy(struct tree *t) {
    if (!t)
        return;
    destroy(t->left);
    destroy(t->right);
    free(t);
}

int main(void) {
    int keys[] = {50, 30, 70, 20, 40, 60};
    struct tree *root = NULL;
    for (int i = 0; i < 6; i++)
        root = insert(root, keys[i]);
    int sorted[6], n = 0;
    walk(root, sorted, &n);
    printf("%d %d %d\n", depth(root), sorted[0], sorted[5]);
    destroy(root);
    return 0;
}
