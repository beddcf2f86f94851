function thrower([{ x }] = [null]) {}
check(function () {
  thrower();
});
