int main()
{
    int count, n;
    for (n = 0; n < 3; n++) {
        count = count;
    }
    count = 39;
    return count - 39;
}
