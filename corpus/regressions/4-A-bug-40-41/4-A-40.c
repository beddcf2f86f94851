#include <stdio.h>

int main(void)
{
	int n, i, x, even = 0;
	scanf("%d", &n);
	for (i = 0; i < n; i++) {
		scanf("%d", &x);
		if (x % 2 == 0)
			even++;
	}
	if (even > n - even)
		printf("More even\n");
	else
		printf("%d ODD\n", n - even);
	return 0;
}
