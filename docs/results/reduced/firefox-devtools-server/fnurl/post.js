var post = 3;
