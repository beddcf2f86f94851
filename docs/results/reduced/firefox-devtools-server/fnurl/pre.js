var pre = 1;
