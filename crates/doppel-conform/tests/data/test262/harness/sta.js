// doppel's stand-in for test262's sta.js (written for doppel's tests): the
// error a failing assertion throws.
function Test262Error(message) {
  this.message = message || "";
}
Test262Error.prototype.toString = function () {
  return "Test262Error: " + this.message;
};
Test262Error.thrower = function (message) {
  throw new Test262Error(message);
};
