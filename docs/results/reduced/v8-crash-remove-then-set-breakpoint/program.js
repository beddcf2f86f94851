function g() {
  var a = true;
  return a;
}
g();
