function g(y) {
  var h = function () { y = y; };
  h();
  y = y;
  return y;
}
g(33);
