function g(y) {
  var h = function () { return 1; };
  h();
  y = y;
  return y;
}
g(33);
