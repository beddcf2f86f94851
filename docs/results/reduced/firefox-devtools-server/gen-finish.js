var a = 0, b = 0;
function* g() {
  a = 1;
  yield;
  b = 2;
}
var it = g();
it.next();
it.next();
console.log(a, b);
