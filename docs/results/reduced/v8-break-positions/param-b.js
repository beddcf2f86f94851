var yield = 23;
var paramValue;
function *g() {
  function f(x = yield, p1) {
    paramValue = x;
  }
  f();
}
g().next();
